//! The table's own rules: every binding reachable, no chord taken twice in a context, every
//! action bound, names and hints rendered the one way.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

#[test]
fn every_binding_is_reachable_by_each_of_its_chords() {
    for context in Context::ALL {
        for binding in context.bindings() {
            assert!(!binding.keys.is_empty(), "{context:?} {:?}", binding.action);
            for chord in binding.keys {
                assert_eq!(
                    action(context, chord.event()),
                    Some(binding.action),
                    "{context:?}: {} is shadowed",
                    chord.name()
                );
            }
        }
    }
}

#[test]
fn no_chord_is_bound_twice_in_a_context() {
    for context in Context::ALL {
        let mut seen: HashMap<Chord, KeyAction> = HashMap::new();
        for binding in context.bindings() {
            for chord in binding.keys {
                if let Some(other) = seen.insert(*chord, binding.action) {
                    panic!(
                        "{context:?}: {} is bound to {other:?} and {:?}",
                        chord.name(),
                        binding.action
                    );
                }
            }
        }
    }
}

#[test]
fn no_action_has_two_bindings_in_a_context() {
    for context in Context::ALL {
        let mut seen = Vec::new();
        for binding in context.bindings() {
            assert!(
                !seen.contains(&binding.action),
                "{context:?}: {:?} twice",
                binding.action
            );
            seen.push(binding.action);
        }
    }
}

#[test]
fn every_action_has_a_binding_or_is_listed_unbound() {
    for action in KeyAction::ALL {
        let bound = Context::ALL
            .iter()
            .any(|c| c.bindings().iter().any(|b| b.action == *action));
        assert!(
            bound != UNBOUND.contains(action),
            "{action:?}: bound {bound}, listed as unbound {}",
            UNBOUND.contains(action)
        );
    }
}

#[test]
fn every_binding_has_help_text() {
    for context in Context::ALL {
        for binding in context.bindings() {
            assert!(!binding.help.trim().is_empty(), "{:?}", binding.action);
        }
    }
}

#[test]
fn key_names_are_written_one_way() {
    let cases = [
        (Chord::ctrl('o'), "Ctrl+O"),
        (Chord::key(KeyCode::BackTab), "Shift+Tab"),
        (Chord::key(KeyCode::PageUp), "PgUp"),
        (Chord::key(KeyCode::PageDown), "PgDn"),
        (Chord::ch(' '), "Space"),
        (Chord::ch('G'), "G"),
        (
            Chord::with(KeyCode::Enter, KeyModifiers::SHIFT),
            "Shift+Enter",
        ),
        (Chord::with(KeyCode::Enter, KeyModifiers::ALT), "Alt+Enter"),
        (Chord::with(KeyCode::End, KeyModifiers::CONTROL), "Ctrl+End"),
        (Chord::key(KeyCode::Up), "↑"),
        (Chord::key(KeyCode::Right), "→"),
    ];
    for (chord, name) in cases {
        assert_eq!(chord.name(), name);
    }
}

#[test]
fn shift_is_part_of_the_character_not_the_chord() {
    let g = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
    assert_eq!(action(Context::Review, g), Some(KeyAction::DiffBottom));
    let back = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(action(Context::Review, back), Some(KeyAction::PrevModel));
}

#[test]
fn a_modified_non_character_key_reads_as_the_bare_key_unless_bound() {
    let shift_pgup = KeyEvent::new(KeyCode::PageUp, KeyModifiers::SHIFT);
    assert_eq!(
        action(Context::Prompt, shift_pgup),
        Some(KeyAction::ScrollUp)
    );
    let ctrl_end = KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL);
    assert_eq!(
        action(Context::Prompt, ctrl_end),
        Some(KeyAction::ScrollBottom)
    );
    let shift_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT);
    assert_eq!(
        action(Context::Prompt, shift_enter),
        Some(KeyAction::Newline)
    );
    // A character with Ctrl is its own chord: Ctrl+F is not `f`.
    let ctrl_f = KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL);
    assert_eq!(action(Context::Review, ctrl_f), None);
}

#[test]
fn hints_join_neighbours_with_the_same_label() {
    let idle = hint_line(Context::Prompt, Some(When::Idle));
    assert_eq!(
        idle,
        "Enter send · Ctrl+J newline · Tab next panel · PgUp/PgDn scroll · / commands · Ctrl+C quit"
    );
    let review = hint_line(Context::Review, None);
    assert!(review.contains("+/-/= rate"), "{review}");
    assert!(review.contains("n/N hunk"), "{review}");
    assert_eq!(
        hint_line(Context::HistorySearch, None),
        "type search · Ctrl+R older · Enter take · Esc cancel"
    );
}

#[test]
fn help_rows_name_every_chord_of_every_binding() {
    for context in Context::ALL {
        let rows = help_rows(context);
        for binding in context.bindings() {
            let names = binding.key_names();
            assert!(
                rows.iter()
                    .any(|(keys, help)| *help == binding.help && keys.contains(&names)),
                "{context:?}: {names} not in /help"
            );
        }
    }
}

#[test]
fn the_keys_views_name_outside_the_hints_are_bound() {
    let review = [
        KeyAction::ReviewBack,
        KeyAction::ReviewClose,
        KeyAction::NextHunk,
        KeyAction::PrevHunk,
        KeyAction::NextLine,
        KeyAction::PrevLine,
        KeyAction::PickLine,
        KeyAction::PickHunk,
        KeyAction::PrevFile,
        KeyAction::NextFile,
        KeyAction::ToggleLayout,
        KeyAction::DiffSearch,
        KeyAction::PickFile,
    ];
    for action in review {
        assert!(!key_name(Context::Review, action).is_empty(), "{action:?}");
    }
    assert_eq!(key_name(Context::Prompt, KeyAction::CancelAll), "Esc");
    assert_eq!(
        hint_of(Context::Prompt, KeyAction::Newline, Some(When::Idle)).as_deref(),
        Some("Ctrl+J newline")
    );
}

/// The review hands every key with Ctrl or Alt to the prompt's context (Ctrl+C, Ctrl+O...), so
/// such a chord in a review context would never be read.
#[test]
fn review_contexts_bind_no_ctrl_or_alt_chord() {
    for context in [
        Context::Review,
        Context::ReviewSearch,
        Context::ReviewComment,
    ] {
        for binding in context.bindings() {
            for chord in binding.keys {
                assert!(
                    !chord
                        .mods
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT),
                    "{context:?}: {} is never read there",
                    chord.name()
                );
            }
        }
    }
}
