//! AgentSkills (agentskills.io): folders holding a `SKILL.md` whose YAML front matter names
//! and describes the skill. Only the catalog (name, description, where its `SKILL.md` is) goes
//! into the system prompt; a model reads a skill's files on demand with `read_file`.
//!
//! Found in the project's `.agents/skills/` and `.claude/skills/` (only once the project is
//! trusted: a skill is instructions a model will follow), in the folders a recipe names, and
//! in the user's `skills/` folder of their versus config folder. A name given twice keeps the
//! first (project, then recipe, then user); the others are skipped and said.
//!
//! The front matter is read by a small strict parser (no YAML dependency): `key: value` lines
//! with plain, quoted or block (`|`, `>`) values and a `metadata:` map of such values. What it
//! does not know (lists, flow maps, anchors, tags) makes the skill malformed: skipped and
//! reported, never half read. Keys other than the spec's are ignored (other agents add their
//! own, e.g. Claude Code's `model`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ContextSources, ProjectContext};

/// Bytes of a `SKILL.md` read to find its front matter.
const SKILL_CAP: u64 = 64 * 1024;
/// Skills in a catalog at most; the rest are skipped and said.
const MAX_SKILLS: usize = 200;
/// Skill folders looked at per skills folder at most.
const MAX_ENTRIES: usize = 1000;
/// The project's skills folders, relative to the working folder.
pub const PROJECT_FOLDERS: &[&str] = &[".agents/skills", ".claude/skills"];

/// Where a skill came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillOrigin {
    /// The project's `.agents/skills/` or `.claude/skills/` (trusted projects only).
    #[default]
    Project,
    /// A folder the recipe names.
    Recipe,
    /// The user's `skills/` folder.
    User,
}

/// One skill of the catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Its name (the spec's rules; equal to its folder's name).
    #[serde(default)]
    pub name: String,
    /// What it does and when to use it.
    #[serde(default)]
    pub description: String,
    /// Where its `SKILL.md` is, as the models are told: relative to the project for a
    /// project skill, absolute for the others.
    #[serde(default)]
    pub location: String,
    /// Where it came from.
    #[serde(default)]
    pub origin: SkillOrigin,
    /// Its folder, for a skill outside the project (read-only for `read_file`).
    #[serde(skip)]
    pub dir: Option<PathBuf>,
}

/// A skill left out of the catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedSkill {
    /// Where its `SKILL.md` is (or its folder).
    #[serde(default)]
    pub location: String,
    /// Why it was left out.
    #[serde(default)]
    pub reason: String,
}

/// The front matter fields the spec defines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontMatter {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `license`.
    pub license: Option<String>,
    /// `compatibility`.
    pub compatibility: Option<String>,
    /// `metadata`.
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`.
    pub allowed_tools: Option<String>,
}

/// Finds the skills of `sources` into `context`.
pub(super) fn gather(project: &Path, sources: &ContextSources, context: &mut ProjectContext) {
    let mut found: Vec<Skill> = Vec::new();
    if sources.project_trusted {
        for folder in PROJECT_FOLDERS {
            project_skills(project, folder, &mut found, context);
        }
    }
    for dir in &sources.skill_dirs {
        outside_skills(dir, SkillOrigin::Recipe, &mut found, context);
    }
    if let Some(user) = &sources.user_dir {
        outside_skills(&user.join("skills"), SkillOrigin::User, &mut found, context);
    }
    let mut kept: Vec<Skill> = Vec::new();
    for skill in found {
        if let Some(first) = kept.iter().find(|k| k.name == skill.name) {
            context.skipped.push(SkippedSkill {
                location: skill.location.clone(),
                reason: format!(
                    "a skill named {} is already in the catalog ({})",
                    skill.name, first.location
                ),
            });
        } else if kept.len() >= MAX_SKILLS {
            context.skipped.push(SkippedSkill {
                location: skill.location.clone(),
                reason: format!("the catalog holds {MAX_SKILLS} skills at most"),
            });
        } else {
            kept.push(skill);
        }
    }
    kept.sort_by(|a, b| a.name.cmp(&b.name).then(a.location.cmp(&b.location)));
    context.skills = kept;
}

/// The entries of a skills folder, sorted, at most [`MAX_ENTRIES`].
fn entries(dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = read
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names.truncate(MAX_ENTRIES);
    names
}

/// Skills of the project's `folder` (e.g. `.agents/skills`): every folder on the way and the
/// file itself opened without following a link, so a link cannot lead out of the project.
fn project_skills(
    project: &Path,
    folder: &str,
    found: &mut Vec<Skill>,
    context: &mut ProjectContext,
) {
    // Each step of the way must be a real folder, not a link.
    let mut dir = project.to_path_buf();
    for part in folder.split('/') {
        dir.push(part);
        match dir.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            _ => return,
        }
    }
    for name in entries(&dir) {
        let rel = format!("{folder}/{name}/SKILL.md");
        match dir.join(&name).symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() => {
                context.skipped.push(SkippedSkill {
                    location: format!("{folder}/{name}"),
                    reason: "it is a symlink; links in a project are not followed".into(),
                });
                continue;
            }
            _ => continue,
        }
        let read = crate::fsutil::read_head_beneath(project, &rel, SKILL_CAP);
        add(read, &name, rel, SkillOrigin::Project, None, found, context);
    }
}

/// Skills of a folder outside the project (the user's, a recipe's): their own files, links
/// followed.
fn outside_skills(
    dir: &Path,
    origin: SkillOrigin,
    found: &mut Vec<Skill>,
    context: &mut ProjectContext,
) {
    for name in entries(dir) {
        let folder = dir.join(&name);
        // A recipe may have come with a project: its skill folders are taken as they are, a
        // link among them is not followed (it could lead to any folder of the user's, which
        // read_file would then read). The user's own may be links.
        if origin == SkillOrigin::Recipe
            && folder
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        {
            context.skipped.push(SkippedSkill {
                location: folder.display().to_string(),
                reason: "it is a symlink; links in a recipe's skill folders are not followed"
                    .into(),
            });
            continue;
        }
        if !folder.is_dir() {
            continue;
        }
        let folder = folder.canonicalize().unwrap_or(folder);
        let path = folder.join("SKILL.md");
        let read = crate::fsutil::read_head(&path, SKILL_CAP);
        let location = path.display().to_string();
        add(read, &name, location, origin, Some(folder), found, context);
    }
}

fn add(
    read: std::io::Result<(Vec<u8>, u64)>,
    folder_name: &str,
    location: String,
    origin: SkillOrigin,
    dir: Option<PathBuf>,
    found: &mut Vec<Skill>,
    context: &mut ProjectContext,
) {
    let parsed = match read {
        Ok((bytes, _)) => match std::str::from_utf8(&bytes) {
            Ok(text) => parse(text, folder_name),
            Err(_) => Err("SKILL.md is not UTF-8 text".to_string()),
        },
        // A folder without SKILL.md is not a skill (a helper folder): nothing to say.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
        Err(err) => Err(format!("SKILL.md could not be read: {err}")),
    };
    match parsed {
        Ok(front) => found.push(Skill {
            name: front.name,
            description: front.description,
            location,
            origin,
            dir,
        }),
        Err(reason) => context.skipped.push(SkippedSkill { location, reason }),
    }
}

/// Checks a name by the spec: 1-64 characters, lowercase letters, digits and hyphens, no
/// hyphen first, last or twice in a row.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > 64 {
        return Err(format!("name `{name}` must be 1 to 64 characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(format!(
            "name `{name}` may hold only lowercase letters, digits and hyphens"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "name `{name}` must not start or end with a hyphen or hold two in a row"
        ));
    }
    Ok(())
}

/// Parses and checks the front matter of a `SKILL.md` in the folder `folder_name`.
pub fn parse(text: &str, folder_name: &str) -> Result<FrontMatter, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md must start with a `---` line (YAML front matter)".into());
    }
    let mut body: Vec<&str> = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" || line.trim_end() == "..." {
            closed = true;
            break;
        }
        body.push(line);
    }
    if !closed {
        return Err("the front matter has no closing `---` line".into());
    }
    let map = parse_map(&body)?;
    let mut front = FrontMatter::default();
    for (key, value) in map {
        match (key.as_str(), value) {
            ("name", Value::Text(v)) => front.name = v,
            ("description", Value::Text(v)) => front.description = v,
            ("license", Value::Text(v)) => front.license = Some(v),
            ("compatibility", Value::Text(v)) => front.compatibility = Some(v),
            ("allowed-tools", Value::Text(v)) => front.allowed_tools = Some(v),
            ("metadata", Value::Map(m)) => front.metadata = m,
            ("metadata", Value::Text(v)) if v.is_empty() => {}
            ("metadata", Value::Text(_)) => {
                return Err("metadata must be a map of `key: value` lines".into());
            }
            (
                "name" | "description" | "license" | "compatibility" | "allowed-tools",
                Value::Map(_),
            ) => {
                return Err(format!("{key} must be a single value, not a map"));
            }
            // Other agents' own keys: not the spec's, ignored.
            _ => {}
        }
    }
    if front.name.is_empty() {
        return Err("the front matter has no name".into());
    }
    check_name(&front.name)?;
    if front.name != folder_name {
        return Err(format!(
            "name `{}` differs from its folder's name `{folder_name}`",
            front.name
        ));
    }
    let description = front.description.trim();
    if description.is_empty() {
        return Err("the front matter has no description".into());
    }
    if description.chars().count() > 1024 {
        return Err("description is over 1024 characters".into());
    }
    front.description = description.to_string();
    if let Some(c) = &front.compatibility
        && (c.is_empty() || c.chars().count() > 500)
    {
        return Err("compatibility must be 1 to 500 characters".into());
    }
    Ok(front)
}

enum Value {
    Text(String),
    Map(BTreeMap<String, String>),
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// `key: value` lines at one indentation into a map; a key with nothing after it takes the
/// more indented lines below as a map (or block lines for `|`/`>`).
fn parse_map(lines: &[&str]) -> Result<Vec<(String, Value)>, String> {
    let mut out: Vec<(String, Value)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if is_blank_or_comment(line) {
            continue;
        }
        if line.starts_with('\t') || indent_of(line) > 0 {
            return Err(format!("unexpected indented line `{}`", line.trim()));
        }
        let (key, rest) = split_key(line)?;
        if out.iter().any(|(k, _)| *k == key) {
            return Err(format!("{key} is given twice"));
        }
        // The more indented lines that follow belong to this key.
        let start = i;
        while i < lines.len() && (lines[i].trim().is_empty() || indent_of(lines[i]) > 0) {
            i += 1;
        }
        let nested = &lines[start..i];
        let value = if rest.is_empty() {
            let inner: Vec<&str> = nested
                .iter()
                .copied()
                .filter(|l| !is_blank_or_comment(l))
                .collect();
            if inner.is_empty() {
                Value::Text(String::new())
            } else {
                let base = indent_of(inner[0]);
                let mut map = BTreeMap::new();
                for l in inner {
                    if indent_of(l) != base {
                        return Err(format!("{key}: only one level of `key: value` is read"));
                    }
                    let (k, v) = split_key(l.trim_start())?;
                    if v.starts_with('|') || v.starts_with('>') {
                        return Err(format!("{key}.{k}: block values are not read here"));
                    }
                    if map.insert(k.clone(), scalar(&v)?).is_some() {
                        return Err(format!("{key}.{k} is given twice"));
                    }
                }
                Value::Map(map)
            }
        } else if let Some(style) = rest.strip_prefix('|').or_else(|| rest.strip_prefix('>')) {
            let folded = rest.starts_with('>');
            if !style.trim().chars().all(|c| matches!(c, '-' | '+')) {
                return Err(format!(
                    "{key}: block indicators other than -/+ are not read"
                ));
            }
            Value::Text(block(nested, folded))
        } else {
            if nested.iter().any(|l| !is_blank_or_comment(l)) {
                // A plain value continued on more lines (folded into one).
                if rest.starts_with('"') || rest.starts_with('\'') {
                    return Err(format!("{key}: a quoted value must end on its line"));
                }
                let mut text = rest.to_string();
                for l in nested.iter().filter(|l| !l.trim().is_empty()) {
                    text.push(' ');
                    text.push_str(l.trim());
                }
                Value::Text(scalar(&text)?)
            } else {
                Value::Text(scalar(&rest)?)
            }
        };
        out.push((key, value));
    }
    Ok(out)
}

fn split_key(line: &str) -> Result<(String, String), String> {
    let Some((key, rest)) = line.split_once(':') else {
        return Err(format!("`{}` is not a `key: value` line", line.trim()));
    };
    let key = key.trim();
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!("`{}` is not a `key: value` line", line.trim()));
    }
    if !rest.is_empty() && !rest.starts_with(' ') {
        return Err(format!("`{}` needs a space after the colon", line.trim()));
    }
    Ok((key.to_string(), rest.trim().to_string()))
}

/// One value: plain (a trailing ` # comment` removed), `'single'` or `"double"` quoted.
fn scalar(text: &str) -> Result<String, String> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('\'') {
        let Some(inner) = inner.strip_suffix('\'') else {
            return Err(format!("unterminated quoted value {text}"));
        };
        return Ok(inner.replace("''", "'"));
    }
    if let Some(inner) = text.strip_prefix('"') {
        let Some(inner) = inner.strip_suffix('"') else {
            return Err(format!("unterminated quoted value {text}"));
        };
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                other => {
                    return Err(format!(
                        "escape `\\{}` is not read",
                        other.map(String::from).unwrap_or_default()
                    ));
                }
            }
        }
        return Ok(out);
    }
    if let Some(first) = text.chars().next()
        && matches!(
            first,
            '[' | '{' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`'
        )
    {
        return Err(format!(
            "value `{text}` is YAML this reader does not take (lists, maps, anchors, tags): write it as plain text"
        ));
    }
    let plain = match text.find(" #") {
        Some(at) => &text[..at],
        None => text,
    };
    Ok(plain.trim_end().to_string())
}

/// A `|` (lines kept) or `>` (lines folded into one paragraph each) block.
fn block(lines: &[&str], folded: bool) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l))
        .min()
        .unwrap_or(0);
    let stripped: Vec<&str> = lines
        .iter()
        .map(|l| if l.len() >= indent { &l[indent..] } else { "" })
        .collect();
    if !folded {
        return stripped.join("\n").trim_end().to_string();
    }
    let mut out = String::new();
    let mut paragraph_start = true;
    for l in stripped {
        if l.trim().is_empty() {
            out.push('\n');
            paragraph_start = true;
        } else {
            if !paragraph_start {
                out.push(' ');
            }
            out.push_str(l.trim_end());
            paragraph_start = false;
        }
    }
    out.trim().to_string()
}

/// `&`, `<`, `>`, `"` as XML entities: a description cannot close the catalog's tags.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() && c != '\n' => out.push_str(&format!("&#{};", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The catalog's section of the system prompt (nothing without skills).
pub(super) fn render(skills: &[Skill], out: &mut String) {
    if skills.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(
        "# Skills\n\n\
         Skills are folders of instructions, scripts and resources for particular tasks. When \
         the task matches a skill's description, read its SKILL.md with read_file (the path \
         given in <location>, exactly as written) before you start, then the other files of \
         its folder it points to when you need them. Paths inside a skill are relative to its \
         folder.\n\n<available_skills>\n",
    );
    for skill in skills {
        out.push_str(&format!(
            "<skill>\n<name>{}</name>\n<description>{}</description>\n<location>{}</location>\n</skill>\n",
            escape(&skill.name),
            escape(&skill.description),
            escape(&skill.location)
        ));
    }
    out.push_str("</available_skills>\n");
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const GOOD: &str = "---\nname: pdf-tools\ndescription: >\n  Extract text from PDFs.\n  Use for <pdf> & forms.\nlicense: Apache-2.0\nmetadata:\n  author: example\n  version: \"1.0\"\nallowed-tools: Bash(python3:*) Read\nmodel: claude-x\n---\n# Body\n";

    #[test]
    fn front_matter_is_read_with_optional_fields() {
        let front = parse(GOOD, "pdf-tools").unwrap();
        assert_eq!(front.name, "pdf-tools");
        assert_eq!(
            front.description,
            "Extract text from PDFs. Use for <pdf> & forms."
        );
        assert_eq!(front.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(front.metadata["version"], "1.0");
        assert_eq!(front.allowed_tools.as_deref(), Some("Bash(python3:*) Read"));
        let quoted = "---\nname: 'a-b'\ndescription: \"say \\\"hi\\\"\" \n---\n";
        assert_eq!(parse(quoted, "a-b").unwrap().description, "say \"hi\"");
    }

    #[test]
    fn malformed_skills_are_refused_with_a_reason() {
        let cases = [
            ("no front matter\n", "x", "must start"),
            ("---\nname: x\ndescription: d\n", "x", "closing"),
            ("---\nname: Bad\ndescription: d\n---\n", "Bad", "lowercase"),
            ("---\nname: a--b\ndescription: d\n---\n", "a--b", "hyphen"),
            ("---\nname: -ab\ndescription: d\n---\n", "-ab", "hyphen"),
            ("---\nname: other\ndescription: d\n---\n", "x", "folder"),
            ("---\nname: x\n---\n", "x", "no description"),
            ("---\ndescription: d\n---\n", "x", "no name"),
            (
                "---\nname: x\ndescription: [a, b]\n---\n",
                "x",
                "does not take",
            ),
            ("---\nname: x\nname: x\ndescription: d\n---\n", "x", "twice"),
            (
                "---\nname: x\ndescription: \"open\n---\n",
                "x",
                "unterminated",
            ),
        ];
        for (text, folder, want) in cases {
            let err = parse(text, folder).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let long = format!("---\nname: x\ndescription: {}\n---\n", "d".repeat(1025));
        assert!(parse(&long, "x").unwrap_err().contains("1024"));
        assert!(check_name(&"a".repeat(65)).is_err());
        assert!(check_name("a1-b2").is_ok());
    }

    #[test]
    fn the_catalog_is_escaped_sorted_and_project_skills_need_trust() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().canonicalize().unwrap();
        let write = |rel: &str, text: &str| {
            let path = project.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(".agents/skills/pdf-tools/SKILL.md", GOOD);
        write(
            ".claude/skills/b-skill/SKILL.md",
            "---\nname: b-skill\ndescription: B\n---\n",
        );
        write(".claude/skills/broken/SKILL.md", "---\nname: nope\n---\n");
        write(
            "user/skills/a-skill/SKILL.md",
            "---\nname: a-skill\ndescription: A\n---\n",
        );
        write(
            "user/skills/pdf-tools/SKILL.md",
            "---\nname: pdf-tools\ndescription: shadowed\n---\n",
        );
        let mut sources = ContextSources {
            user_dir: Some(project.join("user")),
            project_trusted: false,
            skill_dirs: Vec::new(),
            sub_agents: None,
        };
        let untrusted = ProjectContext::gather(&project, &sources);
        let names: Vec<&str> = untrusted.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a-skill", "pdf-tools"]);
        assert_eq!(untrusted.skills[1].origin, SkillOrigin::User);
        sources.project_trusted = true;
        let trusted = ProjectContext::gather(&project, &sources);
        let names: Vec<&str> = trusted.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a-skill", "b-skill", "pdf-tools"]);
        assert_eq!(
            trusted.skills[2].location,
            ".agents/skills/pdf-tools/SKILL.md"
        );
        let reasons: Vec<&str> = trusted.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(reasons.iter().any(|r| r.contains("folder")), "{reasons:?}");
        assert!(reasons.iter().any(|r| r.contains("already")), "{reasons:?}");
        let text = trusted.prompt_text();
        assert!(text.contains("Use for &lt;pdf&gt; &amp; forms."), "{text}");
        assert!(text.find("a-skill").unwrap() < text.find("b-skill").unwrap());
        // The user's skill folder is readable by read_file; the project's are in the workspace.
        assert_eq!(trusted.read_roots(), [project.join("user/skills/a-skill")]);
    }

    #[test]
    fn a_link_among_a_recipes_skill_folders_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let elsewhere = base.join("elsewhere/private");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(
            elsewhere.join("SKILL.md"),
            "---\nname: private\ndescription: P\n---\n",
        )
        .unwrap();
        let recipe_skills = base.join("recipe/skills");
        std::fs::create_dir_all(&recipe_skills).unwrap();
        std::os::unix::fs::symlink(&elsewhere, recipe_skills.join("private")).unwrap();
        let sources = ContextSources {
            user_dir: None,
            project_trusted: false,
            skill_dirs: vec![recipe_skills],
            sub_agents: None,
        };
        let context = ProjectContext::gather(&base.join("recipe"), &sources);
        assert!(context.skills.is_empty());
        assert!(context.read_roots().is_empty());
        assert!(
            context.skipped[0].reason.contains("symlink"),
            "{:?}",
            context.skipped
        );
    }
}
