//! Blind mode: models shown as "Model A", "Model B"... in a shuffled order until the choice is
//! made, so the user judges the work, not the brand.

/// The mapping for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlindNames {
    /// `order[i]` = index of the real model shown as the i-th letter.
    order: Vec<usize>,
    revealed: bool,
}

impl BlindNames {
    /// A shuffle of `count` models from `seed` (a per-turn random number; tests pass a fixed
    /// one). Fisher-Yates over a small xorshift generator: no dependency, and a good enough
    /// shuffle for hiding names.
    pub fn new(count: usize, seed: u64) -> Self {
        let mut order: Vec<usize> = (0..count).collect();
        let mut state = seed | 1;
        for i in (1..count).rev() {
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

    /// The name shown for real model `index` ("Model A"...; after 26, "Model 27"...).
    pub fn alias(&self, index: usize) -> String {
        let position = self.order.iter().position(|&i| i == index).unwrap_or(index);
        if position < 26 {
            format!("Model {}", (b'A' + position as u8) as char)
        } else {
            format!("Model {}", position + 1)
        }
    }

    /// The label to show: the alias until revealed, then the real label.
    pub fn shown(&self, index: usize, real: &str) -> String {
        if self.revealed {
            format!("{real} ({})", self.alias(index))
        } else {
            self.alias(index)
        }
    }

    /// Real model indices in the order they are displayed.
    pub fn display_order(&self) -> &[usize] {
        &self.order
    }

    /// Shows the real names (after the choice).
    pub fn reveal(&mut self) {
        self.revealed = true;
    }

    /// Whether names are shown.
    pub fn is_revealed(&self) -> bool {
        self.revealed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_a_permutation_hidden_until_revealed() {
        let mut names = BlindNames::new(3, 42);
        let mut aliases: Vec<String> = (0..3).map(|i| names.alias(i)).collect();
        aliases.sort();
        assert_eq!(aliases, ["Model A", "Model B", "Model C"]);
        assert!(!names.shown(0, "openai/gpt-5").contains("openai"));
        names.reveal();
        assert!(
            names
                .shown(0, "openai/gpt-5")
                .starts_with("openai/gpt-5 (Model ")
        );
        // Different seeds give different orders for some seed (the shuffle is not fixed).
        let orders: std::collections::BTreeSet<Vec<usize>> = (0..20)
            .map(|s| BlindNames::new(3, s * 7919).display_order().to_vec())
            .collect();
        assert!(orders.len() > 1);
        assert_eq!(
            BlindNames::new(30, 1).alias(BlindNames::new(30, 1).display_order()[27]),
            "Model 28"
        );
    }
}
