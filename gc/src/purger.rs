//! The purge thread (UE's `FAsyncPurge`) for classes without a pool: with
//! [`GcSettings::async_purge`](crate::GcSettings::async_purge), an object the collector (or
//! `destroy_now`) ends has its hooks run and its slot released on the game thread — every
//! handle is stale at once — and its destructor run here, off it; the cell comes back
//! vacant, and the heap recycles it on its next step. The arena returns such a class's
//! ended objects undropped ([`EndedCells::ReturnedUndropped`](respawn_arena::EndedCells)),
//! on the class's returned list; the heap hands what a step returned over in one batch.
//!
//! ```text
//!  game thread                                   purge thread
//!  ───────────                                   ────────────
//!  end_life: hooks, slot released
//!   └─ arena: Freed::Occupied on the class's returned list
//!  hand_over (after a purge slice) ──post_all──► inbox ──► drop_in_place (panics caught, counted)
//!   └─ wake                                                  │
//!  reclaim (next purge / update) ◄───────────────── done ◄───┘
//!   └─ Arena::recycle: the cell is vacant for the class's next insert
//! ```
//!
//! The hand-off is one [`Mailbox`]: a lock around the two lists, held only to push a batch or to
//! swap a list out, and a condition variable the thread waits on while there is nothing to
//! do. The game thread never waits for the thread except when the heap drops: shutdown
//! stops it once the inbox is empty and joins it, so every object handed over is dropped
//! exactly once before the arena's memory goes. (Loom model below: `loom_purge_hand_off`.)

use std::time::Duration;

use respawn_allocator::sync::{AtomicBool, AtomicU64, Condvar, Mutex, Ordering};

/// How long the purge thread sleeps when nobody wakes it (the game thread wakes it after
/// every batch it posts; this bounds a wake-up that was lost anyway).
#[cfg(not(loom))]
const IDLE: Duration = Duration::from_millis(20);
#[cfg(loom)]
const IDLE: Duration = Duration::from_millis(0);

/// The lists between the game thread and the purge thread: jobs `J` in, results `D` out.
pub(crate) struct Mailbox<J, D> {
    state: Mutex<State<J, D>>,
    wake: Condvar,
    /// Jobs posted so far (the game thread's count, read without the lock to tell whether
    /// a wake-up is due).
    posted: AtomicU64,
    /// Results wait in `done` (read without the lock to tell whether a reclaim is due).
    has_done: AtomicBool,
}

struct State<J, D> {
    /// Posted, not yet taken by the thread.
    inbox: Vec<J>,
    /// Finished, not yet reclaimed by the game thread.
    done: Vec<D>,
    /// The heap is dropping: finish the inbox, then return.
    stop: bool,
    /// Jobs posted, run, and run with a panic, since the start.
    posted: u64,
    ran: u64,
    panics: u64,
}

/// What the purge thread has done so far ([`Heap::purge_thread_stats`](crate::Heap::purge_thread_stats)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PurgeThreadStats {
    /// Objects handed to the purge thread, their destructors still to run or run.
    pub posted: u64,
    /// Destructors the purge thread has run (`posted − dropped` are on their way).
    pub dropped: u64,
    /// Of `dropped`, destructors that panicked: caught on the purge thread, the cell
    /// recycled all the same (the object is never dropped again).
    pub panics: u64,
    /// Whether the purge thread has started (it starts at the first object handed to it).
    pub running: bool,
}

impl<J, D> Default for Mailbox<J, D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<J, D> Mailbox<J, D> {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State { inbox: Vec::new(), done: Vec::new(), stop: false, posted: 0, ran: 0, panics: 0 }),
            wake: Condvar::new(),
            posted: AtomicU64::new(0),
            has_done: AtomicBool::new(false),
        }
    }

    /// Hands `job` to the thread (game thread; no wake-up: [`wake`](Self::wake) after a batch).
    #[cfg(loom)]
    pub(crate) fn post(&self, job: J) {
        self.post_all(std::iter::once(job));
    }

    /// Hands every job of `jobs` to the thread under one lock (game thread; no wake-up).
    pub(crate) fn post_all(&self, jobs: impl IntoIterator<Item = J>) {
        let mut state = self.state.lock();
        let before = state.inbox.len();
        state.inbox.extend(jobs);
        state.posted += (state.inbox.len() - before) as u64;
        self.posted.store(state.posted, Ordering::Relaxed);
    }

    /// Jobs posted so far, without the lock (for the poster: exact; for others, a hint).
    pub(crate) fn posted(&self) -> u64 {
        self.posted.load(Ordering::Relaxed)
    }

    /// Wakes the thread if it waits.
    pub(crate) fn wake(&self) {
        self.wake.notify_all();
    }

    /// Moves the finished results into `into` (appended).
    pub(crate) fn reclaim(&self, into: &mut Vec<D>) {
        // Set under the lock with each append, cleared under it with the swap: a result
        // appended after the load below is seen by the next reclaim.
        if !self.has_done.load(Ordering::Acquire) {
            return;
        }
        let mut state = self.state.lock();
        self.has_done.store(false, Ordering::Relaxed);
        if into.is_empty() {
            std::mem::swap(&mut state.done, into);
        } else {
            into.append(&mut state.done);
        }
    }

    /// Tells the thread to return once the inbox is empty, and wakes it.
    pub(crate) fn stop(&self) {
        self.state.lock().stop = true;
        self.wake.notify_all();
    }

    /// The counts so far.
    pub(crate) fn counts(&self) -> (u64, u64, u64) {
        let state = self.state.lock();
        (state.posted, state.ran, state.panics)
    }

    /// The purge thread's loop: takes the inbox whole, runs each job outside the lock
    /// (`run` returns the result and whether the job panicked), hands the results back;
    /// returns once stopped with the inbox empty. Also run on the game thread at shutdown
    /// when no thread was started, to drain what was posted.
    pub(crate) fn serve(&self, mut run: impl FnMut(J) -> (D, bool)) {
        let (mut batch, mut results) = (Vec::new(), Vec::new());
        loop {
            {
                let mut state = self.state.lock();
                while state.inbox.is_empty() {
                    if state.stop {
                        return;
                    }
                    state = self.wake.wait_for(state, IDLE);
                }
                std::mem::swap(&mut state.inbox, &mut batch);
            }
            let mut panics = 0;
            for job in batch.drain(..) {
                let (done, panicked) = run(job);
                results.push(done);
                panics += u64::from(panicked);
            }
            let mut state = self.state.lock();
            state.ran += results.len() as u64;
            state.panics += panics;
            state.done.append(&mut results);
            self.has_done.store(true, Ordering::Release);
        }
    }
}

#[cfg(not(loom))]
pub(crate) use real::Purger;

#[cfg(not(loom))]
mod real {
    use std::panic::{self, AssertUnwindSafe};
    use std::thread::JoinHandle;

    use respawn_allocator::sync::Arc;
    use respawn_allocator::ClassId;
    use respawn_arena::{Arena, Freed, FreedCell};

    use super::{Mailbox, PurgeThreadStats};

    /// A class's destructor, as the arena keeps it: drops the object at the address.
    type DropFn = unsafe fn(*mut u8);

    /// An ended object's cell, with its class's destructor.
    pub(crate) struct Job {
        cell: FreedCell,
        drop: DropFn,
    }

    impl Job {
        /// Drops the object in the cell; the cell comes back vacant, with whether the
        /// destructor panicked.
        fn run(self) -> (FreedCell, bool) {
            let cell = self.cell.cell().as_ptr();
            // SAFETY: the cell was returned occupied (`Freed::Occupied`): its slot is
            // released, so nothing else reaches the object, and the token is the one owner
            // of the cell until it is recycled; the object is dropped here, once (a panic
            // leaves it half dropped, never dropped again).
            let panicked = panic::catch_unwind(AssertUnwindSafe(|| unsafe { (self.drop)(cell) })).is_err();
            (self.cell, panicked)
        }
    }

    /// The heap's side of the purge thread: the classes whose ended objects it drops, the
    /// mailbox, the thread once started, and the game thread's buffers for the cells that
    /// go and come back.
    #[derive(Default)]
    pub(crate) struct Purger {
        /// The classes the thread drops for, with their destructors: each returns its
        /// ended objects undropped.
        classes: Vec<(ClassId, DropFn)>,
        mailbox: Arc<Mailbox<Job, FreedCell>>,
        thread: Option<JoinHandle<()>>,
        /// Cells taken from a class's returned list, and the jobs made of them: buffers
        /// reused from step to step.
        returned: Vec<Freed>,
        jobs: Vec<Job>,
        back: Vec<FreedCell>,
        /// Jobs posted as of the last wake-up: a step that posted nothing wakes nobody.
        woken: u64,
    }

    impl Purger {
        /// The thread drops `class`'s ended objects (whose destructor is `drop`) from now on:
        /// the heap set the class's cells to come back undropped.
        pub(crate) fn adopt_class(&mut self, class: ClassId, drop: DropFn) {
            self.classes.push((class, drop));
        }

        /// Leaves `class`'s objects to another owner (a pool took the class's ended cells):
        /// the thread does not drop them.
        pub(crate) fn release_class(&mut self, class: ClassId) {
            self.classes.retain(|&(c, _)| c != class);
        }

        /// Hands what the thread's classes returned since the last call over to it in one
        /// batch — an ended object to drop, or a cell that came back empty (a `remove`,
        /// which moved its object out) straight to `arena` — and starts the thread if it is
        /// not running, and wakes it. Called by the heap after a step that may have ended
        /// objects.
        #[inline]
        pub(crate) fn hand_over(&mut self, arena: &mut Arena) {
            if !self.classes.is_empty() {
                self.hand_over_returned(arena);
            }
        }

        #[inline(never)]
        fn hand_over_returned(&mut self, arena: &mut Arena) {
            let Self { classes, mailbox, returned, jobs, .. } = self;
            for &(class, drop) in classes.iter() {
                match arena.drain_returned(class) {
                    Ok(taken) => returned.extend(taken),
                    Err(_) => debug_assert!(false, "the heap's own class"),
                }
                for freed in returned.drain(..) {
                    match freed {
                        Freed::Occupied(cell, _) => jobs.push(Job { cell, drop }),
                        Freed::Cell(cell, _) => {
                            let back = arena.recycle(cell);
                            debug_assert!(back.is_ok(), "a returned cell belongs to its arena");
                        }
                        // Retired at the generation ceiling: no cell comes back.
                        Freed::Retired { .. } => {}
                    }
                }
                if !jobs.is_empty() {
                    mailbox.post_all(jobs.drain(..));
                }
            }
            let posted = self.mailbox.posted();
            if posted != self.woken {
                self.woken = posted;
                self.start_and_wake();
            }
        }

        #[cold]
        #[inline(never)]
        fn start_and_wake(&mut self) {
            if self.thread.is_none() {
                let mailbox = Arc::clone(&self.mailbox);
                let started =
                    std::thread::Builder::new().name("respawn-purge".into()).spawn(move || mailbox.serve(Job::run));
                // No thread (the OS refused one): the objects wait in the inbox, and the
                // heap's drop runs them.
                self.thread = started.ok();
            }
            self.mailbox.wake();
        }

        /// Gives the cells the thread finished with back to `arena`: vacant for the next
        /// objects of their classes.
        #[inline]
        pub(crate) fn reclaim(&mut self, arena: &mut Arena) {
            self.mailbox.reclaim(&mut self.back);
            for cell in self.back.drain(..) {
                let back = arena.recycle(cell);
                debug_assert!(back.is_ok(), "a returned cell belongs to its arena");
            }
        }

        /// The counts so far.
        pub(crate) fn stats(&self) -> PurgeThreadStats {
            let (posted, dropped, panics) = self.mailbox.counts();
            PurgeThreadStats { posted, dropped, panics, running: self.thread.is_some() }
        }

        /// Drops every object handed over and not dropped yet, and joins the thread: after
        /// this, no object of the arena is in the thread's hands. The heap calls it as it
        /// drops, before the arena.
        pub(crate) fn shutdown(&mut self) {
            self.mailbox.stop();
            match self.thread.take() {
                // `serve` catches the destructors' panics, so the thread returns normally.
                Some(thread) => {
                    let joined = thread.join();
                    debug_assert!(joined.is_ok(), "the purge thread catches its jobs' panics");
                }
                // Never started: whatever was posted is dropped here.
                None => self.mailbox.serve(Job::run),
            }
        }
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use respawn_allocator::sync::{thread, Arc, AtomicUsize, Ordering};

    use super::Mailbox;

    /// The game thread posts two jobs, waking the thread after each, reclaims what comes
    /// back while the thread works, and stops; the thread serves until stopped. In every
    /// interleaving each job runs exactly once, every result comes back exactly once, and
    /// the thread returns (no lost wake-up: under loom a wait has no timeout).
    #[test]
    fn loom_purge_hand_off() {
        loom::model(|| {
            let mailbox = Arc::new(Mailbox::<usize, usize>::new());
            let runs = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
            let thread = {
                let (mailbox, runs) = (Arc::clone(&mailbox), Arc::clone(&runs));
                thread::spawn(move || {
                    mailbox.serve(|job| {
                        runs[job].fetch_add(1, Ordering::Relaxed);
                        (job, job == 1)
                    })
                })
            };
            let mut back = Vec::new();
            for job in 0..2 {
                mailbox.post(job);
                mailbox.wake();
                mailbox.reclaim(&mut back);
            }
            mailbox.stop();
            thread.join().unwrap();
            mailbox.reclaim(&mut back);
            back.sort_unstable();
            assert_eq!(back, [0, 1], "each cell back once");
            assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1), "each job run once");
            assert_eq!(mailbox.counts(), (2, 2, 1));
        });
    }
}
