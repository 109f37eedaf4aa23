//! The order the calls of one step run in: reads side by side, everything else one by one.
//!
//! A model often asks for several reads at once (three files, two searches, a page). Run one
//! after the other, the step takes the sum of their times; run together, about the slowest
//! one's. Calls that change something (write, edit, patch, bash, a server's tool that does not
//! say it only reads) keep the model's order and are barriers: each starts once every call
//! before it ended, and no call after it starts before it ended, so a read placed after a write
//! sees the write. Results always come back in call order.
//!
//! The loop gives this module a flag per call ([`crate::tools::ToolRegistry::runs_concurrently`])
//! and two closures: `run` makes a call's future, `done` is told each result in call order as
//! soon as every earlier call has ended too, so events reach the panels in a stable order.

use std::future::Future;
use std::ops::Range;

use futures::StreamExt;

/// Calls of one step that run at the same time at most: enough for a model's usual fan-out
/// of reads, few enough not to flood the disk, a web server or an MCP server.
pub(crate) const MAX_CONCURRENT: usize = 8;

/// The calls of a step as groups run one after the other: a run of consecutive concurrent
/// calls is one group, every other call a group of its own.
pub(crate) fn groups(concurrent: &[bool]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, &c) in concurrent.iter().enumerate() {
        match out.last_mut() {
            Some(last) if c && concurrent[last.start] => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// Runs call `i` with `run(i)` for every call, concurrent ones of a group at most
/// [`MAX_CONCURRENT`] at a time, and tells `done(i, &result)` in call order. Returns the
/// results in call order.
pub(crate) async fn run_calls<T, F, Fut>(
    concurrent: &[bool],
    run: F,
    mut done: impl FnMut(usize, &T),
) -> Vec<T>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T>,
{
    let mut results: Vec<Option<T>> = Vec::with_capacity(concurrent.len());
    results.resize_with(concurrent.len(), || None);
    let mut released = 0;
    for group in groups(concurrent) {
        if group.len() == 1 {
            let i = group.start;
            results[i] = Some(run(i).await);
        } else {
            let mut running = futures::stream::iter(group.clone())
                .map(|i| {
                    let call = run(i);
                    async move { (i, call.await) }
                })
                .buffer_unordered(MAX_CONCURRENT);
            while let Some((i, result)) = running.next().await {
                results[i] = Some(result);
                released = release(&results, released, &mut done);
            }
        }
        released = release(&results, released, &mut done);
    }
    results.into_iter().flatten().collect()
}

/// Tells `done` every result from `from` on whose earlier calls all ended; returns the first
/// call not told yet.
fn release<T>(results: &[Option<T>], from: usize, done: &mut impl FnMut(usize, &T)) -> usize {
    let mut next = from;
    while let Some(Some(result)) = results.get(next) {
        done(next, result);
        next += 1;
    }
    next
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn reads_group_and_every_other_call_stands_alone() {
        // read read write read read bash read
        let flags = [true, true, false, true, true, false, true];
        assert_eq!(groups(&flags), [0..2, 2..3, 3..5, 5..6, 6..7]);
        assert_eq!(groups(&[false, false]), [0..1, 1..2]);
        assert!(groups(&[]).is_empty());
    }

    /// Reads wait for each other (a barrier of the group's size): done sequentially they
    /// would never finish; a write in between must not start before the reads before it ended.
    #[tokio::test]
    async fn reads_overlap_writes_are_barriers_and_results_keep_call_order() {
        let flags = [true, true, true, false, true, true];
        let barrier = Arc::new(tokio::sync::Barrier::new(3));
        let second = Arc::new(tokio::sync::Barrier::new(2));
        let ended = Arc::new(AtomicUsize::new(0));
        let mut told = Vec::new();
        let results = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            run_calls(
                &flags,
                |i| {
                    let barrier = Arc::clone(&barrier);
                    let second = Arc::clone(&second);
                    let ended = Arc::clone(&ended);
                    async move {
                        match i {
                            0..=2 => {
                                barrier.wait().await;
                                // Finish in reverse order: results must still come in order.
                                tokio::task::yield_now().await;
                            }
                            3 => assert_eq!(ended.load(Ordering::SeqCst), 3, "write ran early"),
                            _ => {
                                assert_eq!(ended.load(Ordering::SeqCst), 4, "read passed the write");
                                second.wait().await;
                            }
                        }
                        ended.fetch_add(1, Ordering::SeqCst);
                        i * 10
                    }
                },
                |i, r| told.push((i, *r)),
            ),
        )
        .await
        .unwrap();
        assert_eq!(results, [0, 10, 20, 30, 40, 50]);
        assert_eq!(told, [(0, 0), (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)]);
    }

    #[tokio::test]
    async fn at_most_the_limit_run_at_once() {
        let flags = [true; 20];
        let now = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        run_calls(
            &flags,
            |_| {
                let now = Arc::clone(&now);
                let most = Arc::clone(&most);
                async move {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(n, Ordering::SeqCst);
                    for _ in 0..5 {
                        tokio::task::yield_now().await;
                    }
                    now.fetch_sub(1, Ordering::SeqCst);
                }
            },
            |_, _| {},
        )
        .await;
        assert_eq!(most.load(Ordering::SeqCst), MAX_CONCURRENT);
    }
}
