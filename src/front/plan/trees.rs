//! The trees of a plan's metadata jobs (jobs with `files`) against every other path the
//! plan touches: no block target inside a tree (its set-up and removal would meet it), and
//! no tree inside another or shared by two jobs (each run removes what it made). Checked
//! with the plan, before the first tree or file is made. A job file of metadata jobs only
//! may run jobs of different phases on one tree, one after another; within a phase, whose
//! jobs run at once, the trees are kept apart the same way (`check_apart_in_each_phase`).
//!
//! It compares paths as they resolve (symbolic links of the parts that exist followed); it
//! never creates, opens or removes anything.

use super::Plan;
use crate::base::diagnostics::error::UsageError;
use std::path::{Component, Path, PathBuf};

/// `path` absolute, its longest existing ancestor resolved and the rest appended as written
/// (`.` and `..` of the rest folded).
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let parts: Vec<Component> = absolute.components().collect();
    // The longest prefix that exists, resolved; what follows it does not exist, so it
    // holds no link and is folded as written.
    let (mut out, rest) = (0..=parts.len())
        .rev()
        .find_map(|i| parts[..i].iter().collect::<PathBuf>().canonicalize().ok().map(|real| (real, &parts[i..])))
        .unwrap_or_else(|| (PathBuf::new(), &parts[..]));
    for part in rest {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Refuses a block target inside a metadata job's tree, and two trees that meet.
pub fn check_apart(plan: &Plan) -> Result<(), UsageError> {
    let trees = roots(plan.jobs());
    for job in plan.jobs().filter(|j| j.spec.metadata.is_none()) {
        for target in &job.spec.targets {
            let at = resolved(target);
            if let Some((tree_job, root)) = trees.iter().find(|(_, root)| at.starts_with(root)) {
                return Err(UsageError::new(format!(
                    "{}: job [{}]'s target {} is inside the tree of job [{tree_job}] ({}): give the block job a target outside the tree",
                    plan.source,
                    job.name,
                    target.display(),
                    root.display()
                )));
            }
        }
    }
    trees_apart(plan, &trees, "")
}

/// Refuses two trees that meet in one phase of a plan of metadata jobs only: they run at
/// once there, while jobs of different phases may use one tree one after another.
pub fn check_apart_in_each_phase(plan: &Plan) -> Result<(), UsageError> {
    for phase in plan.phases.iter().filter(|p| p.jobs.len() > 1) {
        trees_apart(plan, &roots(phase.jobs.iter()), ", or a phase of its own (stonewall = true)")?;
    }
    Ok(())
}

/// Each metadata job's name and its tree's root, resolved.
fn roots<'a>(jobs: impl Iterator<Item = &'a super::Job>) -> Vec<(&'a str, PathBuf)> {
    jobs.filter(|j| j.spec.metadata.is_some())
        .filter_map(|j| j.spec.targets.first().map(|t| (j.name.as_str(), resolved(t))))
        .collect()
}

/// Refuses two of `trees` that meet (one inside the other, or the same); `other_fix` is
/// said after the fix.
fn trees_apart(plan: &Plan, trees: &[(&str, PathBuf)], other_fix: &str) -> Result<(), UsageError> {
    for (i, (a_job, a)) in trees.iter().enumerate() {
        for (b_job, b) in &trees[i + 1..] {
            if a.starts_with(b) || b.starts_with(a) {
                return Err(UsageError::new(format!(
                    "{}: the trees of jobs [{a_job}] ({}) and [{b_job}] ({}) meet: give each metadata job a root of its own, outside the other's{other_fix}",
                    plan.source,
                    a.display(),
                    b.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::resolved;
    use std::path::Path;

    #[test]
    fn a_path_not_yet_made_resolves_through_its_existing_parent() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(resolved(&dir.path().join("a/b/../c")), real.join("a/c"));
        assert!(resolved(&dir.path().join("t/x.dat")).starts_with(resolved(&dir.path().join("t"))));
        assert!(!resolved(Path::new("/tmp/tree2")).starts_with(resolved(Path::new("/tmp/tree"))));
    }
}
