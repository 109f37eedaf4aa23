//! The recipe allowlist: does every command in a bash line start with an allowed prefix?
//!
//! The line is scanned the way bash tokenises it, as far as splitting goes: single quotes,
//! double quotes, `$'...'`, backslash escapes, line continuations and comments are honoured,
//! so a `;` inside quotes does not split, and a quote inside a comment does not hide the next
//! line. Whenever the scanner cannot be sure what bash would do, it refuses: a refusal costs the
//! model one more call, an acceptance in error runs a command the user did not allow.
//!
//! Decisions:
//! - A simple command ends at `;`, `&`, `|`, a newline (so `&&`, `||`, `|&` and `;;` too). Each
//!   must start with the words of one allowed prefix (word by word, so `cargo test -p a`
//!   matches `cargo test` and `cargo testx` does not). Words are compared as written: a leading
//!   assignment such as `FOO=1 cargo test` is refused unless the prefix includes it.
//! - Refused outright: every expansion (`$NAME`, `${...}`, `$"..."`, `$(`, `$((`,
//!   `$[`, backticks; inside double quotes too), process substitution (`<(`, `>(`), unquoted
//!   parentheses (subshells and function definitions could redefine an allowed command),
//!   here-documents and here-strings, and options that make a tool run another program
//!   (`--config`, `-Z...`, `-c`, `--exec-path`, ... see [`runs_programs`]).
//! - The allowlist is a policy, not the boundary: allowing `cargo test` allows the project's
//!   tests (and build scripts) to run any code. The sandbox (`crate::exec`) is what confines
//!   that code.
//! - Redirections: duplicating or closing a file descriptor (`2>&1`, `>&2`, `<&0`, `2>&-`)
//!   touches no file and is allowed; `/dev/null` as a target is allowed (it is a sink, not a
//!   file of the project); every other redirection (`>`, `>>`, `>|`, `<`, `<>`, `&>`, `2>file`,
//!   `>&file`) is refused.
//! - Empty prefixes in the list are ignored (they would allow everything).

use std::fmt;

/// Why a command line was refused. The text names the offending part and the allowed prefixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    problem: String,
    allowed: Vec<String>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bash command refused by the allowlist: {}. ",
            self.problem
        )?;
        if self.allowed.is_empty() {
            return write!(f, "No command is allowed in this run; do without bash.");
        }
        let list: Vec<String> = self.allowed.iter().map(|p| format!("`{p}`")).collect();
        write!(
            f,
            "Allowed command prefixes: {}. Every command in the line (split at ;, &&, ||, |, & \
             and newlines) must start with one of them, without $(...), backticks, <(...), \
             >(...), parentheses or redirection to files; run them as separate calls if needed.",
            list.join(", ")
        )
    }
}

impl std::error::Error for Refusal {}

/// Checks `line` against the allowed prefixes. `Ok` means bash may run it as is.
pub(crate) fn check(line: &str, allowed: &[String]) -> Result<(), Refusal> {
    let prefixes: Vec<Vec<&str>> = allowed
        .iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect();
    let shown: Vec<String> = prefixes.iter().map(|w| w.join(" ")).collect();
    let refuse = |problem: String| Refusal {
        problem,
        allowed: shown.clone(),
    };
    let commands = Scanner::new(line).run().map_err(refuse)?;
    for command in commands {
        let allowed_here = prefixes.iter().any(|prefix| {
            prefix.len() <= command.words.len()
                && prefix.iter().zip(&command.words).all(|(p, w)| p == w)
        });
        if !allowed_here {
            return Err(refuse(format!(
                "`{}` does not start with an allowed prefix",
                clip(&command.text)
            )));
        }
        if let Some(word) = command.words.iter().find(|w| runs_programs(w)) {
            return Err(refuse(format!(
                "`{}` in `{}` can make an allowed command run another program",
                clip(word),
                clip(&command.text)
            )));
        }
    }
    Ok(())
}

/// Options known to make an allowed tool run a program of the caller's choosing: cargo's
/// `--config 'build.rustc-wrapper=...'` and `-Z`, git's `-c core.pager=...` and
/// `--exec-path`/`--upload-pack`, npm's `--script-shell`/`--node-options`, and a `-c`
/// (shells, python, git). Matched on the word as written, quotes removed, so `'--config'` is
/// caught too; an `=value` form counts as the option.
fn runs_programs(word: &str) -> bool {
    let bare: String = word
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    let name = bare.split('=').next().unwrap_or(&bare);
    const LONG: &[&str] = &[
        "--config",
        "--exec-path",
        "--upload-pack",
        "--receive-pack",
        "--script-shell",
        "--node-options",
        "--rustc-wrapper",
        "--init-file",
        "--rcfile",
    ];
    LONG.contains(&name) || name.starts_with("-Z") || name == "-c"
}

/// One simple command: its raw words (quotes kept) and its text, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SimpleCommand {
    words: Vec<String>,
    text: String,
}

/// Characters that end a word in bash.
fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_separator(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '\n')
}

fn is_metachar(c: char) -> bool {
    is_blank(c) || is_separator(c) || matches!(c, '<' | '>' | '(' | ')')
}

/// Long commands are cut in messages so a refusal stays readable.
fn clip(s: &str) -> String {
    const MAX: usize = 120;
    let s = s.trim();
    if s.chars().count() <= MAX {
        return s.to_string();
    }
    let cut: String = s.chars().take(MAX).collect();
    format!("{cut}...")
}

struct Scanner<'a> {
    chars: Vec<(usize, char)>,
    line: &'a str,
    pos: usize,
    word: String,
    words: Vec<String>,
    /// Byte offset where the current simple command started (first word), if any.
    start: Option<usize>,
    commands: Vec<SimpleCommand>,
}

impl<'a> Scanner<'a> {
    fn new(line: &'a str) -> Self {
        Self {
            chars: line.char_indices().collect(),
            line,
            pos: 0,
            word: String::new(),
            words: Vec::new(),
            start: None,
            commands: Vec::new(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).map(|&(_, c)| c)
    }

    fn offset(&self, pos: usize) -> usize {
        self.chars.get(pos).map_or(self.line.len(), |&(o, _)| o)
    }

    /// The text of the simple command being scanned, up to the current position.
    fn current_text(&self) -> String {
        let from = self.start.unwrap_or_else(|| self.offset(self.pos));
        let to = self.end_of_command_from(self.pos);
        clip(&self.line[from.min(to)..to])
    }

    /// Offset of the next unquoted-looking separator at or after `pos` (for messages only).
    fn end_of_command_from(&self, pos: usize) -> usize {
        let mut p = pos;
        while let Some(&(o, c)) = self.chars.get(p) {
            if c == '\n' || c == ';' {
                return o;
            }
            p += 1;
        }
        self.line.len()
    }

    fn mark_start(&mut self) {
        if self.start.is_none() {
            self.start = Some(self.offset(self.pos));
        }
    }

    fn push_char(&mut self, c: char) {
        self.mark_start();
        self.word.push(c);
    }

    /// Keeps `c` in the current word and moves past it: the scanner's most common step.
    fn take(&mut self, c: char) {
        self.push_char(c);
        self.pos += 1;
    }

    fn end_word(&mut self) {
        if !self.word.is_empty() {
            self.words.push(std::mem::take(&mut self.word));
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if let Some(start) = self.start.take() {
            let end = self.offset(self.pos);
            self.commands.push(SimpleCommand {
                words: std::mem::take(&mut self.words),
                text: self.line[start..end].trim().to_string(),
            });
        }
        self.words.clear();
    }

    fn run(mut self) -> Result<Vec<SimpleCommand>, String> {
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => match self.peek(1) {
                    // Line continuation: bash removes both characters.
                    Some('\n') => self.pos += 2,
                    Some(next) => {
                        self.push_char(c);
                        self.push_char(next);
                        self.pos += 2;
                    }
                    None => {
                        self.take(c);
                    }
                },
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted()?,
                '`' => return Err(self.substitution("command substitution with backticks")),
                '$' => self.dollar(false)?,
                '(' | ')' => {
                    return Err(format!(
                        "unquoted `{c}` (subshells, function definitions and arrays) in `{}`",
                        self.current_text()
                    ));
                }
                '<' | '>' => self.redirection()?,
                '&' if self.peek(1) == Some('>') => self.redirection()?,
                '#' if self.word.is_empty() => {
                    // A comment runs to the end of the line; the newline still separates.
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                c if is_separator(c) => {
                    self.end_command();
                    self.pos += 1;
                }
                c if is_blank(c) => {
                    self.end_word();
                    self.pos += 1;
                }
                c => {
                    self.take(c);
                }
            }
        }
        self.end_command();
        Ok(self.commands)
    }

    fn substitution(&self, what: &str) -> String {
        format!("{what} is not allowed (in `{}`)", self.current_text())
    }

    /// `'...'`: everything literal up to the next quote.
    fn single_quoted(&mut self) -> Result<(), String> {
        self.take('\'');
        loop {
            match self.peek(0) {
                None => return Err("unterminated single quote `'`".to_string()),
                Some('\'') => {
                    self.take('\'');
                    return Ok(());
                }
                Some(c) => {
                    self.take(c);
                }
            }
        }
    }

    /// `$'...'`: like single quotes, but a backslash escapes the next character.
    fn ansi_c_quoted(&mut self) -> Result<(), String> {
        self.push_char('$');
        self.push_char('\'');
        self.pos += 2;
        loop {
            match self.peek(0) {
                None => return Err("unterminated quote `$'`".to_string()),
                Some('\\') => {
                    self.take('\\');
                    if let Some(next) = self.peek(0) {
                        self.take(next);
                    }
                }
                Some('\'') => {
                    self.take('\'');
                    return Ok(());
                }
                Some(c) => {
                    self.take(c);
                }
            }
        }
    }

    /// `"..."`: separators are literal, but `$(`, backticks and `${` still expand.
    fn double_quoted(&mut self) -> Result<(), String> {
        self.take('"');
        loop {
            match self.peek(0) {
                None => return Err("unterminated double quote `\"`".to_string()),
                Some('"') => {
                    self.take('"');
                    return Ok(());
                }
                Some('\\') => {
                    self.take('\\');
                    if let Some(next) = self.peek(0) {
                        self.take(next);
                    }
                }
                Some('`') => {
                    return Err(self.substitution("command substitution with backticks"));
                }
                Some('$') => self.dollar(true)?,
                Some(c) => {
                    self.take(c);
                }
            }
        }
    }

    /// `$` and what follows it. Every expansion is refused, however plain it looks: the
    /// allowlist cannot know a variable's value, and bash evaluates more inside expansions
    /// than a scanner can follow (`${PWD:_}` evaluates `$_` arithmetically, which runs a
    /// `$(...)` stored there by an earlier, harmless-looking command). A `$` that expands to
    /// nothing but itself (before a blank, a separator, a closing quote or the end) passes.
    fn dollar(&mut self, in_double_quotes: bool) -> Result<(), String> {
        match self.peek(1) {
            Some('(') => Err(self.substitution("command substitution `$(`")),
            Some('[') => Err(self.substitution("arithmetic expansion `$[`")),
            None => {
                self.take('$');
                Ok(())
            }
            Some(c) if is_metachar(c) || (in_double_quotes && c == '"') => {
                self.take('$');
                Ok(())
            }
            // `$'...'` is quoting (ANSI-C escapes), not an expansion.
            Some('\'') if !in_double_quotes => self.ansi_c_quoted(),
            Some(_) => Err(format!(
                "expansions (`$NAME`, `${{...}}`, `$\"...\"`) are not allowed in an \
                 allowlisted command (in `{}`): the allowlist cannot see their values; write \
                 the value itself",
                self.current_text()
            )),
        }
    }

    /// A redirection operator at `<`, `>` or `&>`. Descriptor duplication and `/dev/null` pass;
    /// anything that reads or writes a file is refused.
    fn redirection(&mut self) -> Result<(), String> {
        // `2>`: the digits are the descriptor, not a word of the command.
        if !self.word.is_empty() && self.word.chars().all(|c| c.is_ascii_digit()) {
            self.word.clear();
        } else {
            self.end_word();
        }
        let first = self.peek(0).unwrap_or('>');
        let second = self.peek(1);
        if first != '&' && second == Some('(') {
            return Err(self.substitution(&format!("process substitution `{first}(`")));
        }
        let (op, len, duplicates) = match (first, second, self.peek(2)) {
            ('&', _, Some('>')) => ("&>>", 3, false),
            ('&', _, _) => ("&>", 2, false),
            ('>', Some('>'), _) => (">>", 2, false),
            ('>', Some('|'), _) => (">|", 2, false),
            ('>', Some('&'), _) => (">&", 2, true),
            ('<', Some('<'), _) => {
                return Err(format!(
                    "here-documents and here-strings (`<<`) are not allowed (in `{}`)",
                    self.current_text()
                ));
            }
            ('<', Some('&'), _) => ("<&", 2, true),
            ('<', Some('>'), _) => ("<>", 2, false),
            ('<', _, _) => ("<", 1, false),
            _ => (">", 1, false),
        };
        self.mark_start();
        let context = self.current_text();
        self.pos += len;
        while self.peek(0).is_some_and(is_blank) {
            self.pos += 1;
        }
        let mut target = String::new();
        while let Some(c) = self.peek(0).filter(|&c| !is_metachar(c)) {
            target.push(c);
            self.pos += 1;
        }
        let digits = target.trim_end_matches('-');
        let is_descriptor = target == "-"
            || (!digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
                && digits.len() + 1 >= target.len());
        if (duplicates && is_descriptor) || target == "/dev/null" {
            return Ok(());
        }
        let shown = if target.is_empty() {
            op.to_string()
        } else {
            format!("{op} {target}")
        };
        Err(format!(
            "redirection `{shown}` to or from a file is not allowed (in `{context}`); only \
             descriptor duplication like `2>&1` and `/dev/null` are"
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn allow(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn ok(line: &str) {
        let list = allow(&["cargo test", "cargo build", "echo"]);
        if let Err(e) = check(line, &list) {
            panic!("`{line}` should be allowed, got: {e}");
        }
    }

    fn refused(line: &str) -> String {
        let list = allow(&["cargo test", "cargo build", "echo"]);
        match check(line, &list) {
            Ok(()) => panic!("`{line}` should be refused"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_prefixes_at_a_word_boundary() {
        ok("cargo test");
        ok("cargo test -p a");
        ok("  cargo   test   -p a  ");
        ok("cargo build && cargo test");
        ok("cargo build || echo failed");
        ok("cargo test -p a | echo x");
        ok("cargo test;");
        ok("cargo test &");
        ok("cargo test\ncargo build\n");
        let e = refused("cargo testx");
        assert!(
            e.contains("`cargo testx` does not start with an allowed prefix"),
            "{e}"
        );
        refused("cargo");
        refused("cargo bench");
    }

    #[test]
    fn every_simple_command_is_checked_and_named() {
        let e = refused("cargo test; rm -rf x");
        assert!(e.contains("`rm -rf x`"), "{e}");
        assert!(e.contains("`cargo test`, `cargo build`, `echo`"), "{e}");
        assert!(refused("cargo test && curl x").contains("`curl x`"));
        assert!(refused("cargo test || curl x").contains("`curl x`"));
        assert!(refused("cargo test | sh").contains("`sh`"));
        assert!(refused("cargo test & rm x").contains("`rm x`"));
        assert!(refused("cargo test |& rm x").contains("`rm x`"));
        assert!(refused("cargo test\nrm x").contains("`rm x`"));
    }

    #[test]
    fn separators_inside_quotes_do_not_split() {
        ok("echo 'a; rm -rf x'");
        ok("echo \"a && rm -rf x\"");
        ok("echo a\\;b");
        ok("echo $'it\\'s; fine'");
        ok("cargo test -- --skip 'a|b'");
    }

    #[test]
    fn quoting_tricks_do_not_hide_a_command() {
        // `$'\''` is one quote character; the `;` after it is a real separator.
        assert!(refused("echo $'\\'' ; rm x ; echo ''").contains("`rm x`"));
        // A quote inside a comment does not swallow the next line.
        assert!(refused("cargo test #'\nrm x\n#'").contains("`rm x`"));
        // An escaped space does not start a comment.
        assert!(refused("echo a\\ #; rm x").contains("`rm x`"));
        // A `#` inside a word is not a comment.
        assert!(refused("echo a#; rm x").contains("`rm x`"));
        refused("echo 'unterminated");
        refused("echo \"unterminated");
    }

    #[test]
    fn comments_and_continuations_are_understood() {
        ok("cargo test # run the tests; rm nothing");
        ok("cargo \\\ntest -p a");
    }

    #[test]
    fn substitutions_are_refused_even_in_double_quotes() {
        assert!(refused("cargo test $(rm x)").contains("command substitution `$(`"));
        assert!(refused("cargo test \"$(rm x)\"").contains("`$(`"));
        assert!(refused("cargo test `rm x`").contains("backticks"));
        assert!(refused("cargo test \"`rm x`\"").contains("backticks"));
        refused("cargo test $((1+2))");
        refused("cargo test $[1+2]");
        assert!(refused("cargo test <(rm x)").contains("process substitution `<(`"));
        assert!(refused("cargo test >(rm x)").contains("process substitution `>(`"));
        // Literal in single quotes.
        ok("echo '$(rm x)' '`x`'");
        ok("echo \\$\\(x\\)");
    }

    #[test]
    fn every_expansion_is_refused_however_plain() {
        for line in [
            "echo $HOME",
            "echo ${HOME}",
            "echo ${X:-default}",
            "echo ${#X}",
            "echo \"$HOME\"",
        ] {
            refused(line);
        }
        ok("echo 'cost: $5' a$ \"$\"");
        refused("echo ${X:-\"}\"}\" ; rm x ; \"");
        refused("echo ${X:-$(rm x)}");
        refused("echo ${X:-a b}");
        refused("echo ${X");
    }

    #[test]
    fn parentheses_and_functions_are_refused() {
        refused("(rm x)");
        refused("cargo() ( rm -rf x ); cargo test");
        refused("cargo test; (cargo build)");
    }

    #[test]
    fn redirections_to_files_are_refused() {
        assert!(refused("cargo test > file").contains("`> file`"));
        assert!(refused("cargo test >file").contains("`> file`"));
        assert!(refused("cargo test >> log").contains("`>> log`"));
        assert!(refused("cargo test 2>err").contains("`> err`"));
        assert!(refused("cargo test &> all").contains("`&> all`"));
        assert!(refused("cargo test &>> all").contains("`&>> all`"));
        assert!(refused("cargo test >| f").contains("`>| f`"));
        assert!(refused("cargo test >&file").contains("`>& file`"));
        assert!(refused("cargo test < input").contains("`< input`"));
        assert!(refused("cargo test <> f").contains("`<> f`"));
        assert!(refused("cargo test <<EOF\nx\nEOF").contains("here-documents"));
        refused("cargo test <<< word");
        refused("cargo test >");
    }

    #[test]
    fn descriptor_duplication_and_dev_null_are_allowed() {
        ok("cargo test 2>&1");
        ok("cargo test 2>&1 | echo done");
        ok("cargo test >&2");
        ok("cargo test 2>&-");
        ok("cargo test 3>&1-");
        ok("cargo test <&0");
        ok("cargo test > /dev/null 2>&1");
        ok("cargo test &>/dev/null");
        refused("cargo test > /dev/nullx");
    }

    #[test]
    fn assignments_need_a_prefix_that_includes_them() {
        refused("FOO=1 cargo test");
        let list = allow(&["RUST_LOG=debug cargo test"]);
        assert!(check("RUST_LOG=debug cargo test -p a", &list).is_ok());
    }

    #[test]
    fn empty_prefixes_allow_nothing() {
        let e = check("ls", &allow(&["", "  "])).unwrap_err().to_string();
        assert!(e.contains("No command is allowed"), "{e}");
    }

    #[test]
    fn empty_lines_and_comments_alone_are_fine() {
        ok("");
        ok("# nothing");
        ok("\n\n");
    }
}
