//! The system allocator, counting live heap bytes, so a build can tell what a
//! time-travel checkpoint (a deep copy of the world) costs in memory. Only the
//! builds that measure install it (`#[global_allocator]` in the wasm façade
//! and in `failover-bench`); one atomic add per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Bytes allocated through [`Counting`] and not yet freed.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

// SAFETY: every call is forwarded unchanged to `System`; only a counter is
// updated on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}
