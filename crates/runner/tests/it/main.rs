//! Integration tests of the runner: one binary, one link for all of them; nextest still runs
//! each test in a process of its own.

mod containment;
mod seeded_replay;
