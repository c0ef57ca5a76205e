//! The guest's allocator: power-of-two size classes, each with a free list, carved from linear
//! memory that grows on demand. No splitting, no coalescing, no search: a block freed in a class
//! is the next one that class hands out. That is all the node needs: its allocations are small
//! (ids, datagrams, the view's vectors), and a steady cluster asks for the same sizes over and
//! over, so its memory stops growing once every class has seen its peak
//! (`steady_state_does_not_grow_linear_memory` in host/tests/cluster.rs checks it). The price is
//! at most twice the bytes asked for, for a fraction of a general allocator's code.
//!
//! The component is single-threaded (wasm32-unknown-unknown has no threads here), so the state
//! needs no lock.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

const PAGE: usize = 65536;
/// Classes 2^0 .. 2^31: every size wasm32 can hold.
const CLASSES: usize = 32;

pub struct Heap(UnsafeCell<State>);

struct State {
    /// The first free block of each class (0: none); a free block holds the address of the next.
    free: [usize; CLASSES],
    /// The unused span at the end of memory: [next, end).
    next: usize,
    end: usize,
}

// SAFETY: the component runs on one thread; nothing shares the heap across threads.
unsafe impl Sync for Heap {}

impl Heap {
    pub const fn new() -> Heap {
        Heap(UnsafeCell::new(State { free: [0; CLASSES], next: 0, end: 0 }))
    }
}

/// The class of a layout: the smallest power of two that holds its size and its alignment (and a
/// free-list link), as its exponent; `None` past 2^31.
fn class(layout: Layout) -> Option<usize> {
    let size = layout.size().max(layout.align()).max(core::mem::size_of::<usize>());
    let class = size.checked_next_power_of_two()?;
    Some(class.trailing_zeros() as usize)
}

unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(k) = class(layout) else { return core::ptr::null_mut() };
        // SAFETY: single-threaded (see above), and no reference to the state outlives this call.
        let s = unsafe { &mut *self.0.get() };
        let Some(free) = s.free.get_mut(k) else { return core::ptr::null_mut() };
        if *free != 0 {
            let block = *free;
            // SAFETY: a free block of this class holds the address of the next one.
            *free = unsafe { *(block as *const usize) };
            return block as *mut u8;
        }
        let size = 1usize << k;
        // Every block starts at a multiple of its size (up to a page), so a block serves any
        // layout of its class, whatever alignment it asks for.
        let align = size.min(PAGE);
        let mut start = (s.next + align - 1) & !(align - 1);
        if start < s.next || start > s.end || s.end - start < size {
            // Fresh pages at the end of memory (the rest of the old span is left unused).
            let pages = size.div_ceil(PAGE);
            let old = core::arch::wasm32::memory_grow(0, pages);
            if old == usize::MAX {
                return core::ptr::null_mut();
            }
            start = old * PAGE;
            s.end = start + pages * PAGE;
        }
        s.next = start + size;
        start as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in `alloc`.
        let s = unsafe { &mut *self.0.get() };
        if let Some(free) = class(layout).and_then(|k| s.free.get_mut(k)) {
            // SAFETY: the block is at least a `usize` long and aligned to one (see `class`).
            unsafe { *(ptr as *mut usize) = *free };
            *free = ptr as usize;
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's layout is valid, and `new_size` rounded up stays in the same class.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if class(layout) == class(new) {
            return ptr;
        }
        // SAFETY: the caller's contract for `realloc` (a live block of `layout`).
        unsafe {
            let to = self.alloc(new);
            if !to.is_null() {
                core::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            to
        }
    }
}
