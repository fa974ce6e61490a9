"""The embedded engine from Python against a dict model, and its errors."""

import random

import pytest

import flashkv


def check(db, model):
    for key in list(model)[:200]:
        assert db.get(key) == model[key]
    assert list(db.range()) == sorted(model.items())


def random_history(db, model, rng, steps):
    for step in range(steps):
        key = b"key%04d" % rng.randrange(600)
        r = rng.random()
        if r < 0.6:
            value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
            db.put(key, value)
            model[key] = value
        elif r < 0.8:
            db.delete(key)
            model.pop(key, None)
        elif r < 0.95:
            ops = []
            for _ in range(rng.randrange(1, 8)):
                k = b"key%04d" % rng.randrange(600)
                v = None if rng.random() < 0.3 else b"batch%d" % step
                ops.append((k, v))
            db.write_batch(ops)
            for k, v in ops:
                if v is None:
                    model.pop(k, None)
                else:
                    model[k] = v
        else:
            lo = b"key%04d" % rng.randrange(600)
            hi = b"key%04d" % rng.randrange(600)
            assert list(db.range(lo, hi)) == sorted((k, v) for k, v in model.items() if lo <= k < hi)


@pytest.mark.parametrize("where", ["directory", "simulated"])
def test_the_engine_matches_a_dict_model_through_a_random_history_with_a_reopen(tmp_path, where):
    db = flashkv.Db.open(str(tmp_path / "db")) if where == "directory" else flashkv.Db.simulated("256MiB")
    model, rng = {}, random.Random(11)
    random_history(db, model, rng, 4000)
    check(db, model)
    db.reopen()
    check(db, model)
    random_history(db, model, rng, 2000)
    check(db, model)
    db.close()
    if where == "directory":
        with flashkv.Db.open(str(tmp_path / "db")) as again:
            check(again, model)


def test_errors_are_python_exceptions_that_keep_the_rust_message(tmp_path):
    db = flashkv.Db.open(str(tmp_path / "db"))
    db.close()
    with pytest.raises(flashkv.FlashkvError, match="the database is closed"):
        db.get(b"k")
    with pytest.raises(flashkv.FlashkvError, match="preset: unknown preset"):
        flashkv.Db.simulated("1GiB", preset="no-such-preset")
    with pytest.raises(flashkv.FlashkvError, match="workload.name"):
        flashkv.run({"title": "bad", "workload": {"name": "no-such-workload", "records": 10}})
    with pytest.raises(TypeError):
        flashkv.Db.simulated().put("a str is not bytes", b"v")


def test_sizes_mean_what_their_units_say():
    # Decimal and binary units, as everywhere a size is given; an ambiguous one is refused.
    with flashkv.Db.simulated("256MB") as db:
        db.put(b"k", b"v")
    with pytest.raises(flashkv.FlashkvError, match="decimal kB, MB, GB, TB") as e:
        flashkv.Db.simulated("1G")
    assert "binary KiB, MiB, GiB, TiB" in str(e.value)
    with pytest.raises(flashkv.FlashkvError, match="binary KiB, MiB, GiB, TiB"):
        flashkv.run({"title": "t", "device": {"capacity": "1gib"}, "workload": {"name": "fillrandom", "records": 10}})


def test_an_experiment_dict_without_a_title_says_so(tmp_path):
    with pytest.raises(flashkv.FlashkvError, match="missing field `title`") as e:
        flashkv.run({"workload": {"name": "fillrandom", "records": 10}}, out=tmp_path / "out")
    assert "TOML parse error" not in str(e.value) and "line 1" not in str(e.value)
