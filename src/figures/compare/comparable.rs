//! Whether two runs can be compared at all: what differs between them besides their
//! figures. The spec (as `iopulse merge` judges it: the seeds may differ), the engine, the
//! iopulse version and result layout, the kernel, the CPU model and its state (governor,
//! boost, SMT), each target's device, filesystem and cache mode (O_DIRECT in effect), and
//! whether storage was touched at all.
//!
//! It lists differences; what to do with them (refuse, warn) is the command's.

use super::inputs::Run;
use crate::figures::result::RunResult;
use serde::{Deserialize, Serialize};

/// One thing that differs between a run of the base and a run of the new side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// What the runs measured (`run`, `job NAME`, `point ...`).
    pub scope: String,
    /// The field, as in the JSON result (`spec.queue_depth`, `environment.kernel`).
    pub field: String,
    pub base: String,
    pub new: String,
    /// The two files the values come from.
    pub base_file: String,
    pub new_file: String,
}

/// Everything that differs between `a` and `b` besides their figures.
pub fn differences(scope: &str, a: &Run, b: &Run) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut add = |field: String, x: String, y: String| {
        // A field null on one side and absent on the other is one layout of "none"; an
        // option given on one side only shows as its leaves (`spec.think.time_ns`).
        let none = |v: &str| v == "null" || v == "absent";
        if x != y && !(none(&x) && none(&y)) {
            out.push(Difference {
                scope: scope.to_string(),
                field,
                base: x,
                new: y,
                base_file: a.file.clone(),
                new_file: b.file.clone(),
            });
        }
    };
    let (ra, rb) = (&a.result, &b.result);
    for d in crate::figures::result::merge::spec_differences(ra, rb) {
        add(d.field, d.first, d.other);
    }
    add("tool.version".into(), ra.tool.version.clone(), rb.tool.version.clone());
    add("schema_version".into(), ra.schema_version.to_string(), rb.schema_version.to_string());
    add("engine.name".into(), ra.engine.name.clone(), rb.engine.name.clone());
    add("environment.kernel".into(), ra.machine.environment.kernel.clone(), rb.machine.environment.kernel.clone());
    add(
        "environment.cpu_model".into(),
        ra.machine.environment.cpu_model.clone(),
        rb.machine.environment.cpu_model.clone(),
    );
    add(
        "environment.cpus_online".into(),
        ra.machine.environment.cpus_online.to_string(),
        rb.machine.environment.cpus_online.to_string(),
    );
    add("storage_touched".into(), ra.data.storage_touched.to_string(), rb.data.storage_touched.to_string());
    add("direct.effective".into(), ra.data.direct.effective.to_string(), rb.data.direct.effective.to_string());
    add("targets.length".into(), ra.targets.len().to_string(), rb.targets.len().to_string());
    for (i, (ta, tb)) in ra.targets.iter().zip(&rb.targets).enumerate() {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        add(format!("targets[{i}].device"), opt(&ta.storage.device), opt(&tb.storage.device));
        add(format!("targets[{i}].filesystem"), opt(&ta.storage.filesystem), opt(&tb.storage.filesystem));
        add(format!("targets[{i}].kind"), format!("{:?}", ta.kind), format!("{:?}", tb.kind));
        add(format!("targets[{i}].direct.effective"), ta.direct.effective.to_string(), tb.direct.effective.to_string());
    }
    let (ca, cb) = (cpu_state(ra), cpu_state(rb));
    for ((field, x), (_, y)) in ca.into_iter().zip(cb) {
        add(field, x, y);
    }
    out
}

/// The CPU state's fields that change what a run can do: governors, boost, SMT, the idle
/// states' driver and governor (how deep idle CPUs sleep, so what waking them costs).
/// Unknown (not recorded, not readable) is no difference from anything.
fn cpu_state(r: &RunResult) -> Vec<(String, String)> {
    let Some(s) = &r.machine.cpu_state else {
        return vec![];
    };
    let governors: Vec<&str> = s.governors.keys().map(String::as_str).collect();
    let known = |v: Option<bool>| v.map_or_else(|| "unknown".to_string(), |b| b.to_string());
    let idle = |v: Option<String>| v.unwrap_or_else(|| "unknown".to_string());
    vec![
        ("cpu_state.governors".into(), if governors.is_empty() { "unknown".into() } else { governors.join(",") }),
        ("cpu_state.boost".into(), known(s.boost)),
        ("cpu_state.smt_active".into(), known(s.smt_active)),
        ("cpu_state.idle.driver".into(), idle(s.idle.as_ref().and_then(|i| i.driver.clone()))),
        ("cpu_state.idle.governor".into(), idle(s.idle.as_ref().and_then(|i| i.governor.clone()))),
    ]
}

/// Drops the differences where one side is `unknown` (a state one machine could not read).
pub fn known(differences: Vec<Difference>) -> Vec<Difference> {
    differences.into_iter().filter(|d| d.base != "unknown" && d.new != "unknown").collect()
}
