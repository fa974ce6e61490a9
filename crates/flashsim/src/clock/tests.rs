use std::sync::{Arc, Mutex};

use super::*;

#[test]
fn a_lanes_time_is_the_sum_of_its_waits() {
    let c = SimClock::new();
    c.wait(10, Wait::Read);
    c.wait(5, Wait::Write); // in the past: no time spent
    c.sleep(30, Wait::Stall);
    assert_eq!(c.now(), 40);
    let f = c.spent(Lane::Foreground);
    assert_eq!(f, LaneTime { read_ns: 10, stall_ns: 30, ..LaneTime::default() });
    assert_eq!(f.total_ns(), c.time(Lane::Foreground));
    assert_eq!(c.spent(Lane::Background), LaneTime::default());
}

/// Each lane issues "requests" at its time, then waits a lane-specific latency; the log of
/// issue times, in the order they were issued, must never go back.
fn lockstep_log(latencies: [&'static [u64]; 3]) -> Vec<(usize, Nanos)> {
    let c = SimClock::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut lanes = Vec::new();
    for (id, lat) in latencies.iter().enumerate().skip(1) {
        let (c2, log2, lat) = (c.clone(), Arc::clone(&log), *lat);
        lanes.push(
            c.spawn(&format!("lane{id}"), Lane::Background, move || {
                for &d in lat {
                    log2.lock().unwrap().push((id, c2.now()));
                    let t = c2.now() + d;
                    c2.wait(t, Wait::Read);
                }
            })
            .unwrap(),
        );
    }
    for &d in latencies[0] {
        log.lock().unwrap().push((0, c.now()));
        c.wait(c.now() + d, Wait::Read);
    }
    for l in lanes {
        l.join().unwrap();
    }
    let v = log.lock().unwrap().clone();
    v
}

#[test]
fn requests_of_every_lane_are_issued_in_simulated_time_order() {
    let lat = [&[5u64, 50, 1, 1, 30, 7][..], &[3, 3, 3, 100, 2][..], &[40, 1, 1, 1, 1, 1, 1][..]];
    let log = lockstep_log(lat);
    assert_eq!(log.len(), 6 + 5 + 7);
    for w in log.windows(2) {
        assert!(w[0].1 <= w[1].1, "issued out of order: {w:?} in {log:?}");
    }
    // Deterministic: the same lanes give the same interleaving, whatever the threads did.
    for _ in 0..20 {
        assert_eq!(lockstep_log(lat), log);
    }
}

#[test]
fn a_blocked_lane_wakes_at_its_wakers_time() {
    let c = SimClock::new();
    let c2 = c.clone();
    let bg = c
        .spawn("worker", Lane::Background, move || {
            // Idle until the foreground asks, then 70 ns of reads, then wakes the foreground.
            c2.block(1, Wait::Idle).unwrap();
            assert_eq!(c2.now(), 20);
            c2.wait(90, Wait::Read);
            c2.notify(2);
        })
        .unwrap();
    c.wait(20, Wait::Read);
    c.notify(1);
    c.block(2, Wait::Stall).unwrap();
    assert_eq!(c.now(), 90);
    bg.join().unwrap();
    assert_eq!(c.spent(Lane::Foreground), LaneTime { read_ns: 20, stall_ns: 70, ..LaneTime::default() });
    assert_eq!(c.spent(Lane::Background), LaneTime { idle_ns: 20, read_ns: 70, ..LaneTime::default() });
}

#[test]
fn blocking_with_nothing_else_to_run_is_stuck_not_a_hang() {
    let c = SimClock::new();
    assert_eq!(c.block(7, Wait::Stall), Err(Stuck { role: Lane::Foreground, what: Wait::Stall }));
    // The lane ends blocked forever unless woken: joining it would hang, so the end of the
    // only runnable lane wakes the foreground with `Stuck`.
    let c2 = c.clone();
    let bg = c
        .spawn("worker", Lane::Background, move || {
            c2.wait(10, Wait::Read);
        })
        .unwrap();
    assert_eq!(c.block(8, Wait::Stall), Err(Stuck { role: Lane::Foreground, what: Wait::Stall }));
    bg.join().unwrap();
}

#[test]
fn a_critical_section_keeps_the_turn_until_it_ends() {
    let c = SimClock::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (c2, log2) = (c.clone(), Arc::clone(&log));
    let bg = c
        .spawn("worker", Lane::Background, move || {
            c2.block(1, Wait::Idle).unwrap();
            log2.lock().unwrap().push(("bg", c2.now()));
        })
        .unwrap();
    {
        let _cs = c.critical();
        // The worker is woken at 0, and would go first on the tie, but the section keeps the turn.
        c.notify(1);
        c.wait(10, Wait::Read);
        log.lock().unwrap().push(("fg in section", c.now()));
        c.wait(20, Wait::Read);
        log.lock().unwrap().push(("fg in section", c.now()));
    }
    log.lock().unwrap().push(("fg after", c.now()));
    bg.join().unwrap();
    assert_eq!(*log.lock().unwrap(), vec![("fg in section", 10), ("fg in section", 20), ("bg", 0), ("fg after", 20)]);
}

#[test]
fn computing_moves_a_lane_by_whole_nanoseconds_and_carries_the_rest() {
    let c = SimClock::new();
    c.compute(1_500);
    assert_eq!(c.now(), 1);
    c.compute(1_700); // 0.5 carried + 1.7 = 2.2 ns
    assert_eq!(c.now(), 3);
    c.compute(800); // 0.2 + 0.8 = 1 ns
    assert_eq!(c.now(), 4);
    c.compute(999);
    assert_eq!(c.now(), 4, "a fraction of a nanosecond waits for the next computation");
    assert_eq!(c.spent(Lane::Foreground), LaneTime { cpu_ns: 4, ..LaneTime::default() });
}

/// Two lanes that compute 1 us each, four times, from time 0: with a core each they overlap, with
/// one core between them they take turns and each waits for the other's computations.
fn two_computing_lanes(cores: usize) -> (Nanos, LaneTime, LaneTime) {
    let c = SimClock::new();
    c.set_host_cores(cores);
    let c2 = c.clone();
    let bg = c
        .spawn("bg", Lane::Background, move || {
            for _ in 0..4 {
                c2.compute(1_000_000);
            }
        })
        .unwrap();
    for _ in 0..4 {
        c.compute(1_000_000);
    }
    bg.join().unwrap();
    (c.now(), c.spent(Lane::Foreground), c.spent(Lane::Background))
}

#[test]
fn lanes_share_the_host_cores_they_are_given() {
    let (end, fg, bg) = two_computing_lanes(0);
    assert_eq!((fg.cpu_ns, fg.cpu_queue_ns, bg.cpu_ns, bg.cpu_queue_ns), (4_000, 0, 4_000, 0));
    assert_eq!(end, 4_000);
    let (_, fg2, bg2) = two_computing_lanes(2);
    assert_eq!((fg2, bg2), (fg, bg), "two cores for two lanes: as many as a core each");
    let (end, fg, bg) = two_computing_lanes(1);
    assert_eq!((fg.cpu_ns, bg.cpu_ns), (4_000, 4_000));
    // One core does 8 us of work, the lanes taking turns (the background first: a spawned lane
    // starts before its spawner goes on): after its first, each computation waits 1 us for the
    // other lane's; the foreground's first too.
    assert_eq!((fg.cpu_queue_ns, bg.cpu_queue_ns), (4_000, 3_000));
    assert_eq!(end.max(fg.total_ns()).max(bg.total_ns()), 8_000);
}

#[test]
fn every_lane_runs_on_the_driving_thread() {
    let c = SimClock::new();
    let driver = std::thread::current().id();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let lanes: Vec<_> = (0..3)
        .map(|i| {
            let (c2, seen2) = (c.clone(), Arc::clone(&seen));
            c.spawn(&format!("lane{i}"), Lane::Background, move || {
                for k in 0..3 {
                    seen2.lock().unwrap().push(std::thread::current().id());
                    c2.wait(c2.now() + 10 + i + k, Wait::Read);
                }
            })
            .unwrap()
        })
        .collect();
    c.wait(100, Wait::Read);
    for l in lanes {
        l.join().unwrap();
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 9);
    assert!(seen.iter().all(|&t| t == driver), "a lane ran off the driving thread");
}

std::thread_local! {
    static TALLY: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// `TALLY` as a lane-local.
#[derive(Debug)]
struct Tally;

impl LaneLocal for Tally {
    fn new_slot(&self) -> Box<dyn std::any::Any + Send> {
        Box::new(0u64)
    }

    fn exchange(&self, slot: &mut (dyn std::any::Any + Send)) {
        let slot = slot.downcast_mut::<u64>().unwrap();
        *slot = TALLY.with(|t| t.replace(*slot));
    }
}

static TALLY_PER_LANE: Tally = Tally;

#[test]
fn a_lane_local_follows_its_lane_across_hand_overs() {
    TALLY.with(|t| t.set(0));
    let c = SimClock::new();
    c.lane_local(&TALLY_PER_LANE);
    c.lane_local(&TALLY_PER_LANE); // once, however often it is asked
    let totals = Arc::new(Mutex::new(Vec::new()));
    let lanes: Vec<_> = (1..=2u64)
        .map(|i| {
            let (c2, totals2) = (c.clone(), Arc::clone(&totals));
            c.spawn("counter", Lane::Background, move || {
                // Each lane adds its own number five times, handing the turn over in between.
                for _ in 0..5 {
                    TALLY.with(|t| t.set(t.get() + i));
                    c2.wait(c2.now() + 7, Wait::Read);
                }
                totals2.lock().unwrap().push((i, TALLY.with(|t| t.get())));
            })
            .unwrap()
        })
        .collect();
    for _ in 0..5 {
        TALLY.with(|t| t.set(t.get() + 100));
        c.wait(c.now() + 5, Wait::Read);
    }
    for l in lanes {
        l.join().unwrap();
    }
    let mut totals = totals.lock().unwrap().clone();
    totals.sort();
    assert_eq!(totals, vec![(1, 5), (2, 10)], "each lane saw its own tally only");
    assert_eq!(TALLY.with(|t| t.get()), 500, "the foreground's tally came back to it");
}

#[test]
fn a_lane_that_panics_ends_and_the_others_go_on() {
    let c = SimClock::new();
    let c2 = c.clone();
    let bg = c
        .spawn("panics", Lane::Background, move || {
            c2.wait(10, Wait::Read);
            panic!("a deliberate panic in a lane");
        })
        .unwrap();
    c.wait(20, Wait::Read);
    bg.join().unwrap();
    c.wait(30, Wait::Read);
    assert_eq!(c.now(), 30);
    assert_eq!(c.spent(Lane::Background).read_ns, 10);
}
