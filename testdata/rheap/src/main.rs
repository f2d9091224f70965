// rheap: a Rust program that allocates through a #[global_allocator] over
// jemalloc's mallocx (jemalloc-sys, "_rjem_" prefix), for jheap's tests.
//
//   rheap        builds a few containers, asks jemalloc for a dump
//                (prof.dump) and prints their sizes (tests/t0222)
//   rheap steps  a long-running program steered by signals, as
//                testdata/w_ctl.c is (tests/t0830): prints "ready", then
//                one step per SIGUSR1 ("step N"); SIGTERM exits ("bye")
//
// The steps, each called from the main loop, keep what they allocate:
//
// step  function      call                count  usable  kept bytes
// ----  ------------  ------------------  -----  ------  ----------
// 1     steps_first   alloc(10000, 8)        50   10240      512000
// 2     steps_second  Box<[u8; 40000]>       20   40960      819200
// 3...  steps_more    alloc(100000, 8)        8  114688      917504 each step
//
// (usable: jemalloc's size class, which its dumps count.)
use std::alloc::{GlobalAlloc, Layout};
use std::collections::{BTreeMap, HashMap};
use std::os::raw::c_void;

struct Je;

fn flags(l: Layout) -> i32 {
    if l.align() <= 16 { 0 } else { l.align().trailing_zeros() as i32 }
}

unsafe impl GlobalAlloc for Je {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        jemalloc_sys::mallocx(l.size(), flags(l)) as *mut u8
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        jemalloc_sys::sdallocx(p as *mut c_void, l.size(), flags(l))
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        jemalloc_sys::rallocx(p as *mut c_void, n, flags(l)) as *mut u8
    }
}

#[global_allocator]
static GLOBAL: Je = Je;

trait Shape { fn build(&self, n: usize) -> Vec<u64>; }
struct Square;
impl Shape for Square {
    #[inline(never)]
    fn build(&self, n: usize) -> Vec<u64> { (0..n as u64).map(|i| i * i).collect() }
}

#[inline(never)]
fn grow_vec(n: usize) -> Vec<u32> { let mut v = Vec::new(); for i in 0..n { v.push(i as u32); } v }

#[inline(never)]
fn fill_map(n: usize) -> HashMap<u64, String> { (0..n as u64).map(|i| (i, format!("value-{}", i))).collect() }

#[inline(never)]
fn fill_tree(n: usize) -> BTreeMap<u32, Box<[u8; 48]>> { (0..n as u32).map(|i| (i, Box::new([i as u8; 48]))).collect() }

// What the steps keep: raw blocks, and boxes
struct Kept {
    raw: Vec<*mut u8>,
    boxes: Vec<Box<[u8; 40000]>>,
}

#[inline(never)]
fn steps_first(k: &mut Kept) {
    for _ in 0..50 {
        k.raw.push(unsafe { std::alloc::alloc(Layout::from_size_align(10000, 8).unwrap()) });
    }
}

#[inline(never)]
fn steps_second(k: &mut Kept) {
    for i in 0..20 {
        k.boxes.push(Box::new([i as u8; 40000]));
    }
}

#[inline(never)]
fn steps_more(k: &mut Kept) {
    for _ in 0..8 {
        k.raw.push(unsafe { std::alloc::alloc(Layout::from_size_align(100000, 8).unwrap()) });
    }
}

fn steps() {
    // signals are read with sigwait, so they must be blocked first
    let sig = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let mut k = Kept { raw: Vec::with_capacity(10000), boxes: Vec::with_capacity(1000) };
    let mut step = 0;
    println!("ready");
    loop {
        let mut n: libc::c_int = 0;
        if unsafe { libc::sigwait(&sig, &mut n) } != 0 {
            std::process::exit(1);
        }
        if n == libc::SIGTERM {
            println!("bye");
            std::process::exit(0);
        }
        step += 1;
        match step {
            1 => steps_first(&mut k),
            2 => steps_second(&mut k),
            _ => steps_more(&mut k),
        }
        println!("step {}", step);
    }
}

fn main() {
    if std::env::args_os().nth(1).map_or(false, |a| a == "steps") {
        return steps();
    }
    let a = grow_vec(300_000);
    let b = fill_map(20_000);
    let c = fill_tree(20_000);
    let d = Square.build(100_000);
    let s: String = std::iter::repeat("abc").take(50_000).collect();
    unsafe {
        jemalloc_sys::mallctl(b"prof.dump\0".as_ptr() as *const _, std::ptr::null_mut(),
                              std::ptr::null_mut(), std::ptr::null_mut(), 0);
    }
    println!("{} {} {} {} {}", a.len(), b.len(), c.len(), d.len(), s.len());
}
