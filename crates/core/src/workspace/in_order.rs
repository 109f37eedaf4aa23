//! Independent work over many items by a few threads, the results in the items' order: what a
//! large change (a thousand files read back, a thousand diffs made) needs to use more than one
//! core without changing what a single thread would have answered.

/// `f` applied to every item, by `threads` scoped threads each taking consecutive items when
/// there are at least `from` items (else on this thread: starting threads costs more than a
/// few items). The results come in the items' order, so the first error among them is the one
/// a single thread would have met first. A panic in `f` is passed on as the calling thread's.
pub(crate) fn map_in_order<T, R, F>(items: &[T], threads: usize, from: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    if items.len() < from.max(1) || threads <= 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_on_one_thread_and_on_several() {
        let items: Vec<u32> = (0..1000).collect();
        let square = |n: &u32| u64::from(*n) * u64::from(*n);
        let expected: Vec<u64> = items.iter().map(square).collect();
        assert_eq!(map_in_order(&items, 4, 64, square), expected);
        assert_eq!(map_in_order(&items[..10], 4, 64, square), expected[..10]);
        assert_eq!(map_in_order(&items, 1, 64, square), expected);
        // Fewer items than threads: still every item once.
        assert_eq!(map_in_order(&items[..3], 8, 1, square), expected[..3]);
        assert!(map_in_order(&items[..0], 4, 0, square).is_empty());
    }

    #[test]
    fn the_first_error_is_the_first_in_order() {
        let items: Vec<u32> = (0..500).collect();
        let results = map_in_order(
            &items,
            4,
            64,
            |n| {
                if n % 97 == 96 { Err(*n) } else { Ok(*n) }
            },
        );
        let first: Result<Vec<u32>, u32> = results.into_iter().collect();
        assert_eq!(first, Err(96));
    }
}
