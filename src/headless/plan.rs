//! The unit of work of a headless run: which model runs which tasks, in which order.
//!
//! A **job** is what one model does without a break in one workspace, so it is also the unit a
//! resume re-runs:
//! - `independent` task mode: one job per task x model, each in a fresh workspace. Jobs are
//!   ordered task by task: each task is one engine turn of its jobs' models.
//! - `sequential` task mode: one job per model covering every task in order, in one workspace
//!   with the conversation carried from task to task. A chain cut short is re-run from its
//!   first task (its workspace and conversation died with the process).
//!
//! A cell is one (task, model) pair of the report; every cell belongs to exactly one job.

use std::collections::BTreeSet;

use crate::recipe::TaskMode;

/// One (task, model) pair, by position in the recipe's task list and the run's model list.
pub type Cell = (usize, usize);

/// One job: a model and the tasks it runs, in order, in one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Position of the job in the plan (also its order of start).
    pub id: usize,
    /// Position of the model in the run's model list.
    pub model: usize,
    /// Positions of the tasks, in the order they run.
    pub tasks: Vec<usize>,
}

impl Job {
    /// The report cells this job fills.
    pub fn cells(&self) -> Vec<Cell> {
        self.tasks.iter().map(|&t| (t, self.model)).collect()
    }
}

/// Every job of a run, in start order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The jobs.
    pub jobs: Vec<Job>,
}

impl Plan {
    /// The jobs for `tasks` tasks and `models` models in `mode`.
    pub fn new(mode: TaskMode, tasks: usize, models: usize) -> Self {
        let mut jobs = Vec::new();
        match mode {
            TaskMode::Independent => {
                for task in 0..tasks {
                    for model in 0..models {
                        jobs.push(Job {
                            id: jobs.len(),
                            model,
                            tasks: vec![task],
                        });
                    }
                }
            }
            TaskMode::Sequential => {
                if tasks > 0 {
                    for model in 0..models {
                        jobs.push(Job {
                            id: jobs.len(),
                            model,
                            tasks: (0..tasks).collect(),
                        });
                    }
                }
            }
        }
        Self { jobs }
    }

    /// The jobs that still have to run: those with a cell not in `done`.
    pub fn remaining(&self, done: &BTreeSet<Cell>) -> Vec<Job> {
        self.jobs
            .iter()
            .filter(|job| job.cells().iter().any(|cell| !done.contains(cell)))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_runs_every_pair_task_by_task() {
        let plan = Plan::new(TaskMode::Independent, 2, 3);
        let order: Vec<Cell> = plan.jobs.iter().flat_map(Job::cells).collect();
        assert_eq!(order, vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
        assert!(plan.jobs.iter().enumerate().all(|(i, j)| j.id == i));
    }

    #[test]
    fn sequential_gives_each_model_one_chain() {
        let plan = Plan::new(TaskMode::Sequential, 3, 2);
        assert_eq!(plan.jobs.len(), 2);
        assert_eq!(plan.jobs[1].tasks, vec![0, 1, 2]);
        assert_eq!(plan.jobs[1].model, 1);
        assert!(Plan::new(TaskMode::Sequential, 0, 2).jobs.is_empty());
    }

    #[test]
    fn remaining_keeps_jobs_with_a_missing_cell() {
        let plan = Plan::new(TaskMode::Independent, 1, 2);
        let done: BTreeSet<Cell> = [(0, 0)].into_iter().collect();
        let left = plan.remaining(&done);
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].model, 1);
        let chain = Plan::new(TaskMode::Sequential, 2, 1);
        let done: BTreeSet<Cell> = [(0, 0)].into_iter().collect();
        assert_eq!(
            chain.remaining(&done).len(),
            1,
            "a half-done chain runs again"
        );
    }
}
