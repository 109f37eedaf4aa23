//! Bradley-Terry ratings from head-to-head games, with a 95% confidence interval.
//!
//! The model: each model `i` has a strength `p_i`, and `i` beats `j` with probability
//! `p_i / (p_i + p_j)`. Strengths are fitted by Hunter's MM iterations (a fixed-point update
//! that raises the likelihood at every step and needs no step size). A tie counts as half a
//! win for each side.
//!
//! A model that won every game would get an infinite strength under plain maximum likelihood.
//! To keep every fit finite, each rated model also gets one virtual win and one virtual loss
//! against a *virtual opponent* of strength 1; real games quickly outweigh these two, and a
//! model with little evidence stays near the middle.
//!
//! Only ratios of strengths mean anything, so ratings are shown centred: the mean of the rated
//! models' `ln p` is the middle of the scale (1000).
//!
//! The interval comes from the Fisher information of that same (penalised) likelihood: its
//! inverse is the covariance of `ln p`, from which the variance of each centred value follows,
//! and the interval is the rating ± 1.96 standard errors. A bootstrap over choices was the
//! alternative; it was not chosen because it collapses to a zero-width interval whenever a
//! model's outcomes are unanimous (three wins out of three resample to three wins every time),
//! exactly when the uncertainty is largest. The Fisher interval treats games as independent,
//! so when one choice yields several games it is somewhat optimistic; it narrows as
//! `1/sqrt(games)`.
//!
//! Ratings use the Elo scale: `1000 + 400 * log10(p / centre)`, so 400 points between two
//! models mean 10:1 odds.

/// One game between two model indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexedGame {
    /// First model.
    pub a: usize,
    /// Second model.
    pub b: usize,
    /// What `a` scored: 1 a win, 0.5 a tie, 0 a loss.
    pub score_a: f64,
}

/// A fitted rating with its 95% confidence interval, on the Elo scale.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rating {
    /// Point estimate (1000 = the middle of the rated models).
    pub value: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

/// The middle of the scale: the rating of a model of average strength.
pub const BASE_RATING: f64 = 1000.0;

/// Virtual wins (and as many virtual losses) each rated model gets against the opponent.
const PRIOR_GAMES: f64 = 1.0;
/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
const MAX_ITERATIONS: usize = 100_000;
const TOLERANCE: f64 = 1e-12;

/// Fits ratings for `n` models from `games`. A model that played no game gets `None`: there is
/// nothing to rate it on, and showing the centre of the scale would look like evidence.
pub fn rate(n: usize, games: &[IndexedGame]) -> Vec<Option<Rating>> {
    let table = Table::build(n, games);
    let strength = fit(&table);
    let rated: Vec<usize> = (0..n).filter(|&i| table.played[i]).collect();
    let k = rated.len();
    let log: Vec<f64> = rated.iter().map(|&i| strength[i].ln()).collect();
    let centre = log.iter().sum::<f64>() / k.max(1) as f64;
    let covariance = inverse(&information(&table, &strength, &rated), k);
    let scale = 400.0 / std::f64::consts::LN_10;
    let mut out = vec![None; n];
    for (a, &i) in rated.iter().enumerate() {
        let value = BASE_RATING + scale * (log[a] - centre);
        let variance = covariance
            .as_ref()
            .map_or(f64::INFINITY, |c| centred_variance(c, k, a));
        let half = Z95 * scale * variance.max(0.0).sqrt();
        out[i] = Some(Rating {
            value,
            low: value - half,
            high: value + half,
        });
    }
    out
}

/// Summed games: score won by each model and games per pair.
struct Table {
    n: usize,
    /// Score won by each model in real games.
    won: Vec<f64>,
    /// Games between `i` and `j` at `i * n + j` (symmetric).
    games: Vec<f64>,
    /// Whether the model played at least one real game.
    played: Vec<bool>,
}

impl Table {
    fn build(n: usize, list: &[IndexedGame]) -> Self {
        let mut table = Self {
            n,
            won: vec![0.0; n],
            games: vec![0.0; n * n],
            played: vec![false; n],
        };
        for g in list {
            if g.a == g.b || g.a >= n || g.b >= n {
                continue;
            }
            let score = g.score_a.clamp(0.0, 1.0);
            table.won[g.a] += score;
            table.won[g.b] += 1.0 - score;
            table.games[g.a * n + g.b] += 1.0;
            table.games[g.b * n + g.a] += 1.0;
            table.played[g.a] = true;
            table.played[g.b] = true;
        }
        table
    }

    fn pair(&self, i: usize, j: usize) -> f64 {
        self.games[i * self.n + j]
    }
}

/// MM iterations (all strengths updated together, so symmetric data stays exactly symmetric).
fn fit(t: &Table) -> Vec<f64> {
    let mut p = vec![1.0; t.n];
    for _ in 0..MAX_ITERATIONS {
        let mut next = p.clone();
        let mut change: f64 = 0.0;
        for i in (0..t.n).filter(|&i| t.played[i]) {
            let mut denominator = 2.0 * PRIOR_GAMES / (p[i] + 1.0);
            for j in (0..t.n).filter(|&j| j != i) {
                let games = t.pair(i, j);
                if games > 0.0 {
                    denominator += games / (p[i] + p[j]);
                }
            }
            next[i] = (t.won[i] + PRIOR_GAMES) / denominator;
            change = change.max((next[i].ln() - p[i].ln()).abs());
        }
        p = next;
        if change < TOLERANCE {
            break;
        }
    }
    p
}

/// The information matrix of `ln p` (rated models only, in `rated` order) of the penalised
/// likelihood: real games plus each model's two virtual games.
fn information(t: &Table, p: &[f64], rated: &[usize]) -> Vec<f64> {
    let k = rated.len();
    let mut info = vec![0.0; k * k];
    for (a, &i) in rated.iter().enumerate() {
        let against_prior = p[i] / (p[i] + 1.0);
        info[a * k + a] += 2.0 * PRIOR_GAMES * against_prior * (1.0 - against_prior);
        for (b, &j) in rated.iter().enumerate().filter(|&(b, _)| b != a) {
            let games = t.pair(i, j);
            if games > 0.0 {
                let win = p[i] / (p[i] + p[j]);
                let w = games * win * (1.0 - win);
                info[a * k + a] += w;
                info[a * k + b] -= w;
            }
        }
    }
    info
}

/// Variance of `ln p_a - mean(ln p)` given the covariance of `ln p`: `c' C c` with
/// `c = e_a - 1/k`. The centred value is what is shown, and unlike `ln p_a` itself (tied to the
/// virtual opponent, which only two virtual games inform) it is pinned down by real games.
fn centred_variance(cov: &[f64], k: usize, a: usize) -> f64 {
    let kf = k as f64;
    let weight = |i: usize| if i == a { 1.0 - 1.0 / kf } else { -1.0 / kf };
    let mut sum = 0.0;
    for i in 0..k {
        for j in 0..k {
            sum += weight(i) * weight(j) * cov[i * k + j];
        }
    }
    sum
}

/// Inverse of a symmetric positive definite `k x k` matrix by Cholesky factorisation. The
/// prior makes the information matrix strictly diagonally dominant, hence positive definite;
/// should rounding still give a pivot that is not positive, `None` (the caller shows an
/// unbounded interval rather than panicking).
fn inverse(m: &[f64], k: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..=i {
            let mut sum = m[i * k + j];
            for x in 0..j {
                sum -= l[i * k + x] * l[j * k + x];
            }
            if i == j {
                if sum <= 0.0 {
                    return None;
                }
                l[i * k + i] = sum.sqrt();
            } else {
                l[i * k + j] = sum / l[j * k + j];
            }
        }
    }
    let mut inv = vec![0.0; k * k];
    for col in 0..k {
        // L y = e_col, then L' x = y.
        let mut y = vec![0.0; k];
        for i in 0..k {
            let mut sum = if i == col { 1.0 } else { 0.0 };
            for x in 0..i {
                sum -= l[i * k + x] * y[x];
            }
            y[i] = sum / l[i * k + i];
        }
        for i in (0..k).rev() {
            let mut sum = y[i];
            for x in i + 1..k {
                sum -= l[x * k + i] * inv[x * k + col];
            }
            inv[i * k + col] = sum / l[i * k + i];
        }
    }
    Some(inv)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn games(list: &[(usize, usize, f64)], times: usize) -> Vec<IndexedGame> {
        let mut out = Vec::new();
        for _ in 0..times {
            out.extend(
                list.iter()
                    .map(|&(a, b, score_a)| IndexedGame { a, b, score_a }),
            );
        }
        out
    }

    #[test]
    fn a_model_that_always_wins_ranks_first() {
        let list = games(&[(0, 1, 1.0), (0, 2, 1.0), (1, 2, 1.0)], 5);
        let r = rate(3, &list);
        let v: Vec<f64> = r.iter().map(|r| r.unwrap().value).collect();
        assert!(v[0] > v[1] && v[1] > v[2], "{v:?}");
        assert!(v[0].is_finite() && v[0] > BASE_RATING);
        assert!(v[2] < BASE_RATING);
    }

    #[test]
    fn symmetric_data_gives_equal_ratings() {
        let list = games(
            &[
                (0, 1, 1.0),
                (1, 0, 1.0),
                (1, 2, 0.5),
                (2, 0, 1.0),
                (0, 2, 1.0),
            ],
            3,
        );
        let r = rate(3, &list);
        let v: Vec<f64> = r.iter().map(|r| r.unwrap().value).collect();
        for x in &v {
            assert!((x - BASE_RATING).abs() < 1e-6, "{v:?}");
        }
    }

    #[test]
    fn ties_only_give_equal_ratings() {
        let r = rate(2, &games(&[(0, 1, 0.5)], 4));
        assert!((r[0].unwrap().value - r[1].unwrap().value).abs() < 1e-9);
    }

    #[test]
    fn the_interval_narrows_with_more_data() {
        let pattern = [(0, 1, 1.0), (0, 1, 1.0), (1, 0, 1.0)];
        let small = rate(2, &games(&pattern, 3))[0].unwrap();
        let large = rate(2, &games(&pattern, 30))[0].unwrap();
        assert!(small.low < small.value && small.value < small.high);
        assert!(
            large.high - large.low < (small.high - small.low) * 0.5,
            "{small:?} {large:?}"
        );
        // More evidence of the same 2:1 record moves the estimate away from the prior.
        assert!(large.value > small.value);
    }

    #[test]
    fn the_winner_of_unanimous_games_still_gets_a_real_interval() {
        let r = rate(2, &games(&[(0, 1, 1.0)], 3))[0].unwrap();
        assert!(r.high - r.low > 50.0, "{r:?}");
    }

    #[test]
    fn a_model_without_games_has_no_rating() {
        let r = rate(3, &games(&[(0, 1, 1.0)], 2));
        assert!(r[0].is_some() && r[1].is_some());
        assert!(r[2].is_none());
    }

    #[test]
    fn self_games_and_out_of_range_indices_are_ignored() {
        let list = vec![
            IndexedGame {
                a: 0,
                b: 0,
                score_a: 1.0,
            },
            IndexedGame {
                a: 0,
                b: 7,
                score_a: 1.0,
            },
        ];
        assert_eq!(rate(2, &list), vec![None, None]);
    }

    #[test]
    fn odds_match_the_elo_scale() {
        // 10 wins to 1 between two models: their strengths' ratio is close to 10:1 once the
        // prior is outweighed, i.e. about 400 points apart.
        let list = games(&[(0, 1, 1.0)], 1000)
            .into_iter()
            .chain(games(&[(1, 0, 1.0)], 100))
            .collect::<Vec<_>>();
        let r = rate(2, &list);
        let gap = r[0].unwrap().value - r[1].unwrap().value;
        assert!((gap - 400.0).abs() < 5.0, "{gap}");
    }

    #[test]
    fn inverse_of_a_known_matrix() {
        // [[4, 1], [1, 3]]^-1 = 1/11 [[3, -1], [-1, 4]]
        let inv = inverse(&[4.0, 1.0, 1.0, 3.0], 2).unwrap();
        let want = [3.0 / 11.0, -1.0 / 11.0, -1.0 / 11.0, 4.0 / 11.0];
        for (got, want) in inv.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{inv:?}");
        }
        assert!(inverse(&[0.0], 1).is_none());
    }

    #[test]
    fn ratings_are_centred_on_the_base() {
        let r = rate(3, &games(&[(0, 1, 1.0), (1, 2, 1.0), (0, 2, 0.5)], 4));
        let mean = r.iter().map(|r| r.unwrap().value).sum::<f64>() / 3.0;
        assert!((mean - BASE_RATING).abs() < 1e-9, "{r:?}");
    }
}
