//! Work spread over the machine's cores.

/// `f` over every item on `threads` threads (at least one), results in the items' order.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let share = items.len().div_ceil(threads.max(1)).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(share)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The number of threads to use: every core.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_items_order_whatever_the_threads() {
        let items: Vec<u64> = (0..23).collect();
        let expected: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for threads in [0, 1, 2, 5, 23, 64] {
            assert_eq!(parallel_map(&items, threads, |x| x * x + 1), expected);
        }
        assert!(parallel_map(&[] as &[u64], 4, |x| *x).is_empty());
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items = [1u32, 2, 3, 4];
        let outcome = std::panic::catch_unwind(|| {
            parallel_map(&items, 2, |&x| {
                assert_ne!(x, 3, "item 3");
                x
            })
        });
        assert!(outcome.is_err());
    }
}
