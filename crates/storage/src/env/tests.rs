use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flashsim::{BlockSsd, LaneTime, Preset, SsdConfig};

use super::*;
use crate::{MemFs, SimFs, SimFsOptions};

fn simfs() -> SimFs {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap();
    SimFs::format(BlockSsd::new(cfg).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap()
}

fn envs() -> Vec<(&'static str, Env)> {
    vec![("wall-clock", Env::new(Arc::new(MemFs::new()))), ("simulated", simfs().env())]
}

#[test]
fn the_file_system_decides_the_env() {
    assert!(Env::new(Arc::new(MemFs::new())).clock().is_none());
    let sim = simfs();
    assert!(sim.env().clock().is_some());
    // A wrapper keeps the file system's time: a fault-injecting SimFs is still simulated.
    let faulty = crate::FaultFs::new(Arc::new(sim), 1);
    assert!(Env::new(Arc::new(faulty)).clock().is_some());
}

#[test]
fn a_worker_runs_requests_and_jobs_one_at_a_time_in_both_envs() {
    for (name, env) in envs() {
        let worker = Worker::new(&env);
        let steps = Arc::new(AtomicU64::new(0));
        let running = Arc::new(Mutex::new(false));
        let (s, r) = (Arc::clone(&steps), Arc::clone(&running));
        worker
            .start("test-worker", move || {
                let mut busy = r.lock().unwrap();
                assert!(!*busy, "two jobs at once");
                *busy = true;
                drop(busy);
                s.fetch_add(1, Ordering::SeqCst);
                *r.lock().unwrap() = false;
            })
            .unwrap();
        worker.request();
        worker.wait_idle().unwrap();
        assert_eq!(steps.load(Ordering::SeqCst), 1, "{name}");
        let r = Arc::clone(&running);
        assert!(worker.run(move || !*r.lock().unwrap()).unwrap(), "{name}: a job runs alone");
        worker.stop().unwrap();
        worker.stop().unwrap();
        assert!(matches!(worker.run(|| ()), Err(EnvError::Stopped)), "{name}");
    }
}

#[test]
fn a_job_that_panics_ends_the_worker_and_its_callers_are_told_in_both_envs() {
    for (name, env) in envs() {
        let worker = Worker::new(&env);
        worker.start("test-worker", || ()).unwrap();
        let r = worker.run(|| -> u32 { panic!("a job's bug") });
        assert!(matches!(r, Err(EnvError::Panicked)), "{name}: {r:?}");
        worker.request();
        assert!(matches!(worker.wait_idle(), Err(EnvError::Panicked)), "{name}");
        assert!(matches!(worker.run(|| ()), Err(EnvError::Panicked)), "{name}");
        worker.stop().unwrap();
    }
}

/// The foreground asks a worker for a job that reads a file; returns the foreground's time when
/// the job is done and where the lanes' time went.
fn read_job(env: &Env) -> (u64, LaneTime, LaneTime) {
    let fs = Arc::clone(env.fs());
    crate::write_all(&*fs, "f", &vec![5u8; 64 << 10], true).unwrap();
    let worker = Worker::new(env);
    let reader = Arc::clone(&fs);
    worker
        .start("reader", move || {
            let f = reader.open("f").unwrap();
            for off in (0..64 << 10).step_by(4096) {
                f.read_at(off, &mut [0u8; 4096]).unwrap();
            }
        })
        .unwrap();
    env.sleep(Duration::from_micros(100), Wait::Stall);
    worker.request();
    worker.wait_idle().unwrap();
    worker.stop().unwrap();
    let c = env.clock().unwrap();
    (env.now_nanos(), c.spent(Lane::Foreground), c.spent(Lane::Background))
}

#[test]
fn a_simulated_worker_runs_in_simulated_time_and_the_caller_waits_for_it() {
    let (now, fg, bg) = read_job(&simfs().env());
    // The worker's lane starts at the foreground's time, idles until asked 100 us later, then
    // reads sixteen pages one after another (40 us each); the foreground stalls for it all.
    assert_eq!(bg.idle_ns, 100_000);
    assert_eq!(bg.read_ns, 16 * 40_000);
    assert_eq!(fg.stall_ns, 100_000 + bg.read_ns);
    assert_eq!(now, fg.total_ns());
    // The same again gives the same times, whatever the threads did.
    for _ in 0..5 {
        assert_eq!(read_job(&simfs().env()), (now, fg, bg));
    }
}

#[test]
fn waiting_for_what_no_lane_can_do_is_stuck_not_a_hang() {
    let env = simfs().env();
    let m = Mutex::new(0);
    let signal = Signal::new();
    let g = env.lock(&m);
    assert!(matches!(env.wait(&signal, g, Wait::Stall), Err(EnvError::Stuck(_))));
}
