//! Slash commands: one table that the parser, the completion list and `/help` all read, so a
//! command cannot exist in one and be missing from another.

use super::action::RewindScope;

/// A command's name, argument synopsis and one-line help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    /// Name without the slash.
    pub name: &'static str,
    /// Argument synopsis (empty when none).
    pub args: &'static str,
    /// What it does.
    pub help: &'static str,
}

/// Every command, in the order `/help` lists them.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        name: "help",
        args: "",
        help: "keys and commands",
    },
    CommandInfo {
        name: "models",
        args: "[add SPEC... | remove SPEC...]",
        help: "list, add or remove models for the next turn",
    },
    CommandInfo {
        name: "config",
        args: "[KEY VALUE]",
        help: "show or change settings (models, tools, limits, system, check)",
    },
    CommandInfo {
        name: "review",
        args: "",
        help: "show the review of the last turn (also Ctrl+O)",
    },
    CommandInfo {
        name: "rewind",
        args: "[files | conversation]",
        help: "undo the last turn: its applied files and/or its conversation",
    },
    CommandInfo {
        name: "blind",
        args: "",
        help: "hide model names as Model A, B, C; again reveals them",
    },
    CommandInfo {
        name: "stats",
        args: "",
        help: "wins, ratings, cost, latency per model: session and overall",
    },
    CommandInfo {
        name: "resume",
        args: "",
        help: "continue the models that were interrupted in the last turn",
    },
    CommandInfo {
        name: "compact",
        args: "",
        help: "shorten every model's conversation to the latest turns",
    },
    CommandInfo {
        name: "clear",
        args: "",
        help: "empty the panels and start every conversation afresh",
    },
    CommandInfo {
        name: "verbose",
        args: "",
        help: "show or hide thinking and full tool arguments",
    },
    CommandInfo {
        name: "mouse",
        args: "",
        help: "mouse on (wheel, click) or off (the terminal selects text)",
    },
    CommandInfo {
        name: "save",
        args: "[FILE]",
        help: "save the session settings (default .versus/tui.toml)",
    },
    CommandInfo {
        name: "load",
        args: "[FILE]",
        help: "load session settings saved with /save",
    },
    CommandInfo {
        name: "export",
        args: "[FILE]",
        help: "write the transcripts as Markdown (default: in the session folder)",
    },
    CommandInfo {
        name: "quit",
        args: "",
        help: "leave versus (running models are stopped)",
    },
];

/// A setting `/config KEY VALUE` changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSet {
    /// `models a,b`: replace the models.
    Models(Vec<String>),
    /// `tools all` or `tools read_file,edit_file`.
    Tools(Option<Vec<String>>),
    /// `max_steps N`.
    MaxSteps(u32),
    /// `timeout SECS`.
    Timeout(u64),
    /// `system TEXT` or `system none`: text added to the system prompt.
    System(Option<String>),
    /// `check CMD` or `check none`: the review check run in each workspace.
    Check(Option<String>),
    /// `review auto` or `review stay`: whether the review opens by itself.
    Review(super::action::ReviewOpening),
}

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/help`.
    Help,
    /// `/models`.
    ModelsList,
    /// `/models add SPEC...`.
    ModelsAdd(Vec<String>),
    /// `/models remove SPEC...`.
    ModelsRemove(Vec<String>),
    /// `/config`.
    ConfigShow,
    /// `/config KEY VALUE`.
    ConfigSet(ConfigSet),
    /// `/review`.
    Review,
    /// `/rewind [files|conversation]`.
    Rewind(RewindScope),
    /// `/blind`.
    Blind,
    /// `/stats`.
    Stats,
    /// `/resume`.
    Resume,
    /// `/compact`.
    Compact,
    /// `/clear`.
    Clear,
    /// `/verbose`.
    Verbose,
    /// `/mouse`.
    Mouse,
    /// `/save [FILE]`.
    Save(Option<String>),
    /// `/load [FILE]`.
    Load(Option<String>),
    /// `/export [FILE]`.
    Export(Option<String>),
    /// `/quit`.
    Quit,
}

/// Parses a line starting with `/`. Errors say what was wrong and what to type instead.
pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    let body = line.strip_prefix('/').unwrap_or(line);
    let (name, rest) = match body.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (body, ""),
    };
    let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    let file = || (!rest.is_empty()).then(|| rest.to_string());
    let no_args = |cmd: Command| {
        if rest.is_empty() {
            Ok(cmd)
        } else {
            Err(format!("/{name} takes no arguments"))
        }
    };
    match name {
        "help" | "?" => Ok(Command::Help),
        "models" => match words.split_first() {
            None => Ok(Command::ModelsList),
            Some((verb, specs)) if !specs.is_empty() && (verb == "add" || verb == "+") => {
                Ok(Command::ModelsAdd(specs.to_vec()))
            }
            Some((verb, specs))
                if !specs.is_empty() && (verb == "remove" || verb == "rm" || verb == "-") =>
            {
                Ok(Command::ModelsRemove(specs.to_vec()))
            }
            _ => Err("usage: /models, /models add SPEC..., /models remove SPEC...".to_string()),
        },
        "config" => parse_config(rest),
        "review" => no_args(Command::Review),
        "rewind" => match rest {
            "" => Ok(Command::Rewind(RewindScope::Both)),
            "files" | "file" => Ok(Command::Rewind(RewindScope::Files)),
            "conversation" | "conversations" | "chat" => {
                Ok(Command::Rewind(RewindScope::Conversation))
            }
            other => Err(format!(
                "/rewind takes `files` or `conversation` (or nothing: both), not `{other}`"
            )),
        },
        "blind" => no_args(Command::Blind),
        "stats" => no_args(Command::Stats),
        "resume" => no_args(Command::Resume),
        "compact" => no_args(Command::Compact),
        "clear" => no_args(Command::Clear),
        "verbose" => no_args(Command::Verbose),
        "mouse" => no_args(Command::Mouse),
        "save" => Ok(Command::Save(file())),
        "load" => Ok(Command::Load(file())),
        "export" => Ok(Command::Export(file())),
        "quit" | "exit" | "q" => Ok(Command::Quit),
        "" => Err("type a command name after / (/help lists them)".to_string()),
        other => {
            let close = COMMANDS
                .iter()
                .map(|c| (strsim::damerau_levenshtein(c.name, other), c.name))
                .filter(|(d, _)| *d <= 2)
                .min()
                .map(|(_, n)| format!(" (did you mean /{n}?)"))
                .unwrap_or_default();
            Err(format!(
                "unknown command /{other}{close}; /help lists the commands (nothing was sent)"
            ))
        }
    }
}

fn parse_config(rest: &str) -> Result<Command, String> {
    if rest.is_empty() {
        return Ok(Command::ConfigShow);
    }
    let (key, value) = match rest.split_once(char::is_whitespace) {
        Some((k, v)) => (k, v.trim()),
        None => (rest, ""),
    };
    if value.is_empty() {
        return Err(format!(
            "/config {key} needs a value (e.g. /config max_steps 30); /config shows the settings"
        ));
    }
    let list = |v: &str| -> Vec<String> {
        v.split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let set = match key {
        "models" => ConfigSet::Models(list(value)),
        "tools" => {
            if value == "all" {
                ConfigSet::Tools(None)
            } else {
                ConfigSet::Tools(Some(list(value)))
            }
        }
        "max_steps" => match value.parse::<u32>() {
            Ok(n) if n > 0 => ConfigSet::MaxSteps(n),
            _ => {
                return Err(format!(
                    "max_steps must be a whole number above 0, not `{value}`"
                ));
            }
        },
        "timeout" => match value.trim_end_matches('s').parse::<u64>() {
            Ok(n) if n > 0 => ConfigSet::Timeout(n),
            _ => return Err(format!("timeout is in seconds (e.g. 600), not `{value}`")),
        },
        "system" => {
            if value == "none" {
                ConfigSet::System(None)
            } else {
                ConfigSet::System(Some(value.to_string()))
            }
        }
        "check" => {
            if value == "none" {
                ConfigSet::Check(None)
            } else {
                ConfigSet::Check(Some(value.to_string()))
            }
        }
        "review" => match value {
            "auto" => ConfigSet::Review(super::action::ReviewOpening::Auto),
            "stay" => ConfigSet::Review(super::action::ReviewOpening::Stay),
            _ => {
                return Err(format!(
                    "review is `auto` (the review opens when changes are ready) or `stay` (a badge, Ctrl+O opens it), not `{value}`"
                ));
            }
        },
        other => {
            return Err(format!(
                "unknown setting `{other}`; settings are models, tools, max_steps, timeout, system, check, review"
            ));
        }
    };
    Ok(Command::ConfigSet(set))
}

/// Commands whose name starts with `prefix` (without the slash), in table order.
pub fn complete(prefix: &str) -> Vec<&'static CommandInfo> {
    COMMANDS
        .iter()
        .filter(|c| c.name.starts_with(prefix))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_rejects_unknown_ones() {
        assert_eq!(parse("/help"), Ok(Command::Help));
        assert_eq!(
            parse("/models add demo/good openai/gpt-5"),
            Ok(Command::ModelsAdd(vec![
                "demo/good".to_string(),
                "openai/gpt-5".to_string()
            ]))
        );
        assert_eq!(
            parse("/config max_steps 30"),
            Ok(Command::ConfigSet(ConfigSet::MaxSteps(30)))
        );
        assert_eq!(
            parse("/config tools read_file, edit_file"),
            Ok(Command::ConfigSet(ConfigSet::Tools(Some(vec![
                "read_file".to_string(),
                "edit_file".to_string()
            ]))))
        );
        assert_eq!(
            parse("/export notes.md"),
            Ok(Command::Export(Some("notes.md".into())))
        );
        let err = parse("/hepl").unwrap_err();
        assert!(err.contains("did you mean /help"), "{err}");
        assert!(parse("/config max_steps x").is_err());
        assert!(parse("/clear now").is_err());
        assert_eq!(parse("/rewind"), Ok(Command::Rewind(RewindScope::Both)));
        assert_eq!(
            parse("/rewind files"),
            Ok(Command::Rewind(RewindScope::Files))
        );
        assert_eq!(
            parse("/rewind conversation"),
            Ok(Command::Rewind(RewindScope::Conversation))
        );
        assert!(parse("/rewind everything").is_err());
        assert_eq!(
            parse("/config check cargo test -q"),
            Ok(Command::ConfigSet(ConfigSet::Check(Some(
                "cargo test -q".into()
            ))))
        );
    }

    #[test]
    fn completion_is_by_prefix_in_table_order() {
        let names: Vec<&str> = complete("c").iter().map(|c| c.name).collect();
        assert_eq!(names, ["config", "compact", "clear"]);
        let names: Vec<&str> = complete("re").iter().map(|c| c.name).collect();
        assert_eq!(names, ["review", "rewind", "resume"]);
        assert_eq!(complete("").len(), COMMANDS.len());
    }
}
