"""A small sweep from Python, plotted with matplotlib.

LevelDB vs RemapCom (seed 000) on a simulated 1 GiB FEMU SSD: fillrandom of 32 MiB at four KV
sizes, 8 runs. Run it locally, or on Ray:

    python python/examples/sweep.py                 # this machine's cores
    python python/examples/sweep.py --ray           # a Ray started here
    python python/examples/sweep.py --ray auto      # the Ray cluster this machine belongs to
    python python/examples/sweep.py --data 256MiB   # longer runs

It prints the runs as a table and writes sweep.png beside the result folder.
"""

import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import flashkv

EXPERIMENT = {
    "title": "LevelDB vs RemapCom: flash write amplification by KV size",
    "metrics": ["write_amplification", "ops_per_sec"],
    "device": {"fs": "sim", "preset": "femu", "capacity": "1GiB"},
    "workload": {"name": "fillrandom", "data": "32MiB", "seed": 42},
    "variant": [{"name": "LevelDB"}, {"name": "RemapCom", "engine": {"remap": "full"}}],
    # Values that make 4, 2, 1 and 1/2 KVs fill a 4 KiB block (16-byte keys).
    "sweep": {"parameter": "workload.value_size", "values": [992, 2013, 4055, 8151]},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help="run on Ray")
    parser.add_argument("--workers", type=int, help="CPUs of a Ray started here")
    parser.add_argument("--out", default="results/python-sweep")
    parser.add_argument("--data", default="32MiB", help="user data per run")
    args = parser.parse_args()
    EXPERIMENT["workload"]["data"] = args.data

    start = time.time()
    if args.ray is None:
        results = flashkv.run(EXPERIMENT, out=args.out)
    else:
        results = flashkv.run(EXPERIMENT, out=args.out, executor="ray", address=args.ray or None, workers=args.workers)
    print(f"{len(results.runs)} runs in {time.time() - start:.1f} s wall")

    frame = results.frame()
    frame["kv_bytes"] = frame["workload.value_size"].astype(int) + 16
    columns = ["variant", "kv_bytes", "flash.write_amplification", "host.ops_per_sec", "flash.remapped_pages"]
    print(frame[columns].to_string(index=False))

    fig, ax = plt.subplots(figsize=(6, 4))
    for variant, rows in frame.groupby("variant"):
        ax.plot(rows["kv_bytes"], rows["flash.write_amplification"], marker="o", label=variant)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("KV size (bytes)")
    ax.set_ylabel("flash write amplification")
    ax.set_title(EXPERIMENT["title"], fontsize=9)
    ax.legend()
    fig.tight_layout()
    png = results.folder / "sweep.png"
    fig.savefig(png, dpi=120)
    print(f"chart: {png}")


if __name__ == "__main__":
    main()
