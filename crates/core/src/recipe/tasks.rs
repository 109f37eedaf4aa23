//! `## Tasks`: one-line bullets, then `### name` subsections for prompts that need several lines.
//!
//! A bullet may continue on indented lines (as in Markdown); a bullet task is named `task-N`
//! after its position, so a report can refer to every task by name. A `### name` task keeps its
//! body verbatim, code blocks included; a `###` inside a code block is part of the text. The
//! writer turns a task back into a bullet only when that reads back to the same task.

use super::model::{SourceLine, Task};
use super::parse::Section;
use super::problems::ProblemKind;
use super::sections::{Ctx, body_text, strip_bullet, subsections};

/// The name a bullet task gets: `task-N`, N its 1-based position among all tasks.
pub(crate) fn bullet_name(position: usize) -> String {
    format!("task-{}", position + 1)
}

/// Reads the tasks of a `## Tasks` section.
pub(crate) fn read(section: &Section, ctx: &mut Ctx) -> Vec<Task> {
    let (lead, subs) = subsections(section);
    let mut tasks: Vec<Task> = Vec::new();
    let mut in_block = false;
    for line in &lead {
        if line.fenced {
            if !in_block {
                ctx.problem(
                    line.number,
                    ProblemKind::Syntax,
                    "a code block cannot go in a bullet task; put the task under a `### name` \
                     heading and the code block in its text",
                );
            }
            in_block = true;
            continue;
        }
        in_block = false;
        if line.is_blank() {
            continue;
        }
        if let Some((level, _)) = line.heading() {
            ctx.problem(
                line.number,
                ProblemKind::Syntax,
                format!(
                    "a level-{level} heading cannot go in ## Tasks; name a task with `### name`"
                ),
            );
            continue;
        }
        if let Some(text) = strip_bullet(&line.text) {
            if text.is_empty() {
                ctx.problem(
                    line.number,
                    ProblemKind::EmptyTask,
                    "empty task: write the prompt after `- `, or remove the line",
                );
            }
            tasks.push(Task {
                name: bullet_name(tasks.len()),
                prompt: text.to_string(),
                line: SourceLine(line.number),
            });
            continue;
        }
        let indented = line.text.starts_with([' ', '\t']);
        match tasks.last_mut() {
            Some(task) if indented => {
                if !task.prompt.is_empty() {
                    task.prompt.push('\n');
                }
                task.prompt.push_str(line.text.trim());
            }
            _ => ctx.problem(
                line.number,
                ProblemKind::Syntax,
                format!(
                    "`{}` is not a task: start a one-line task with `- `, or put a longer one \
                     under a `### name` heading",
                    line.text.trim()
                ),
            ),
        }
    }
    for sub in subs {
        let name = sub.name.trim().to_string();
        let prompt = body_text(&sub.body);
        if name.is_empty() {
            ctx.problem(
                sub.line,
                ProblemKind::MissingValue,
                "a `###` task needs a name: write `### fix-the-parser`",
            );
        }
        if prompt.is_empty() {
            ctx.problem(
                sub.line,
                ProblemKind::EmptyTask,
                format!("task `{name}` has no text: write its prompt under the heading"),
            );
        }
        tasks.push(Task {
            name,
            prompt,
            line: SourceLine(sub.line),
        });
    }
    tasks.retain(|t| !t.prompt.is_empty() && !t.name.is_empty());
    for (i, task) in tasks.iter().enumerate() {
        if let Some(first) = tasks[..i].iter().find(|t| t.name == task.name) {
            ctx.problem(
                task.line.0,
                ProblemKind::DuplicateEntry,
                format!(
                    "a task named `{}` already exists at line {}; task names must be unique",
                    task.name, first.line.0
                ),
            );
        }
    }
    tasks
}

/// Writes tasks so that [`read`] gives them back: bullets while that is exact, then `###`.
pub(crate) fn write(tasks: &[Task], out: &mut String) {
    let mut headings = false;
    for (i, task) in tasks.iter().enumerate() {
        let as_bullet = !headings
            && task.name == bullet_name(i)
            && !task.prompt.contains('\n')
            && task.prompt == task.prompt.trim()
            && strip_bullet(&task.prompt).is_none();
        if as_bullet {
            out.push_str(&format!("- {}\n", task.prompt));
        } else {
            if !headings {
                out.push('\n');
            }
            headings = true;
            out.push_str(&format!("### {}\n{}\n\n", task.name, task.prompt));
        }
    }
}
