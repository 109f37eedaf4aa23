//! Blind mode: models shown as "Model A", "Model B"... in a shuffled order, so the user judges
//! the work, not the brand.
//!
//! The aliases belong to the *session*, not to a turn: a model keeps its alias from the first
//! frame to the end (a panel keeps its earlier turns, so an alias that changed between turns
//! would give the mapping away). The session engine owns one [`BlindNames`], records it in the
//! session log (a reopened session comes back with the same aliases), and reveals the names
//! only when the user asks or the session ends.

use std::collections::BTreeMap;

/// The aliases of a session's models, and whether the names are shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlindNames {
    /// Model labels in alias order: `order[i]` is shown as the i-th alias.
    order: Vec<String>,
    revealed: bool,
}

/// The alias of the model at display position `position` ("Model A"...; after 26,
/// "Model 27"...).
pub fn alias_at(position: usize) -> String {
    if position < 26 {
        format!("Model {}", (b'A' + position as u8) as char)
    } else {
        format!("Model {}", position + 1)
    }
}

/// The display position an alias stands for (`"Model C"` → 2), if it is one [`alias_at`] makes.
fn position_of(alias: &str) -> Option<usize> {
    let rest = alias.strip_prefix("Model ")?;
    match rest.as_bytes() {
        [c] if c.is_ascii_uppercase() => Some(usize::from(c - b'A')),
        _ => rest
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 26)
            .map(|n| n - 1),
    }
}

/// The shown name of a model that has no alias while names are hidden: never its label.
pub const UNKNOWN_ALIAS: &str = "Model ?";

impl BlindNames {
    /// A shuffle of `labels` from `seed` (a random number per session; tests pass a fixed
    /// one). Fisher-Yates over a small xorshift generator: no dependency, and a good enough
    /// shuffle for hiding names.
    pub fn new(labels: &[String], seed: u64) -> Self {
        let mut order: Vec<String> = Vec::with_capacity(labels.len());
        for label in labels {
            if !order.contains(label) {
                order.push(label.clone());
            }
        }
        let mut state = seed | 1;
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let j = (state % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        Self {
            order,
            revealed: false,
        }
    }

    /// The aliases as recorded (label → alias), back: models in the order of their aliases.
    /// Aliases it did not make itself are kept in their sorted order.
    pub fn from_aliases(aliases: &BTreeMap<String, String>, revealed: bool) -> Self {
        let mut pairs: Vec<(Option<usize>, &String, &String)> = aliases
            .iter()
            .map(|(label, alias)| (position_of(alias), alias, label))
            .collect();
        pairs.sort();
        Self {
            order: pairs.into_iter().map(|(_, _, l)| l.clone()).collect(),
            revealed,
        }
    }

    /// Gives `label` the next free alias when it has none (a model added to a blind session).
    /// Returns whether it was new.
    pub fn assign(&mut self, label: &str) -> bool {
        if self.order.iter().any(|l| l == label) {
            return false;
        }
        self.order.push(label.to_string());
        true
    }

    /// The alias of `label`, when it has one.
    pub fn alias(&self, label: &str) -> Option<String> {
        self.rank(label).map(alias_at)
    }

    /// Where `label` is laid out (its alias's position), when it has an alias.
    pub fn rank(&self, label: &str) -> Option<usize> {
        self.order.iter().position(|l| l == label)
    }

    /// The name to show for `label`: its alias while hidden ([`UNKNOWN_ALIAS`] for a model
    /// without one: never the label), then `label (alias)`.
    pub fn shown(&self, label: &str) -> String {
        match (self.alias(label), self.revealed) {
            (Some(alias), false) => alias,
            (None, false) => UNKNOWN_ALIAS.to_string(),
            (Some(alias), true) => format!("{label} ({alias})"),
            (None, true) => label.to_string(),
        }
    }

    /// Every model with its alias (what the session log records).
    pub fn aliases(&self) -> BTreeMap<String, String> {
        self.order
            .iter()
            .enumerate()
            .map(|(i, l)| (l.clone(), alias_at(i)))
            .collect()
    }

    /// Model labels in alias order ("Model A" first).
    pub fn labels(&self) -> &[String] {
        &self.order
    }

    /// Shows the real names (the user asked, or the session ended).
    pub fn reveal(&mut self) {
        self.revealed = true;
    }

    /// Whether names are shown.
    pub fn is_revealed(&self) -> bool {
        self.revealed
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p/m{i}")).collect()
    }

    #[test]
    fn aliases_are_a_permutation_hidden_until_revealed() {
        let mut names = BlindNames::new(&labels(3), 42);
        let mut aliases: Vec<String> = labels(3).iter().map(|l| names.shown(l)).collect();
        aliases.sort();
        assert_eq!(aliases, ["Model A", "Model B", "Model C"]);
        assert!(!names.shown("p/m0").contains("p/m0"));
        names.reveal();
        assert!(names.shown("p/m0").starts_with("p/m0 (Model "));
        // Different seeds give different orders for some seed (the shuffle is not fixed).
        let orders: std::collections::BTreeSet<Vec<String>> = (0..20)
            .map(|s| BlindNames::new(&labels(3), s * 7919).labels().to_vec())
            .collect();
        assert!(orders.len() > 1);
        let many = BlindNames::new(&labels(30), 1);
        assert_eq!(many.alias(&many.labels()[27].clone()).unwrap(), "Model 28");
    }

    #[test]
    fn recorded_aliases_come_back_the_same_and_new_models_get_the_next_one() {
        let names = BlindNames::new(&labels(30), 99);
        let back = BlindNames::from_aliases(&names.aliases(), false);
        assert_eq!(back, names);
        let mut back = back;
        assert!(back.assign("p/new"));
        assert!(!back.assign("p/new"));
        assert_eq!(back.alias("p/new").unwrap(), "Model 31");
        assert_eq!(back.shown("p/unknown"), UNKNOWN_ALIAS);
    }
}
