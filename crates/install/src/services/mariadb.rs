//! mariadb: not checked yet.

use crate::converge::Engine;

pub fn check(_e: &Engine, _notes: &mut [String]) {}
