//! What iopulse knows of fio's vocabulary, in one place: every fio option a job file may
//! hold and what becomes of it in iopulse (`options.rs`, the table `fio_import` translates
//! by and docs/fio.md lists), and fio's command-line flag names answered with iopulse's
//! (`flag_names.rs`: `--bs 4k` is told `--block-size`). Both tables name the same options,
//! which a test holds together.
//!
//! Names only: it reads no value, translates nothing (`front/fio_import/` does) and formats no
//! result in fio's layout (`output/report/fio_json.rs` does).

pub mod flag_names;
pub mod options;

#[cfg(test)]
mod tests {
    /// Every fio flag name answered on the command line is an option the job-file table
    /// knows (by its name or an alias), so the two never tell a user different stories.
    #[test]
    fn every_flag_name_is_an_option_the_table_knows() {
        let unknown: Vec<&str> = super::flag_names::FIO_NAMES
            .iter()
            .map(|(fio, _)| *fio)
            .filter(|fio| super::options::lookup(fio).is_none())
            .collect();
        assert!(unknown.is_empty(), "fio flag names missing from front/fio/options.rs: {unknown:?}");
        // And each option the table sends to a flag or command has its answer there.
        let unanswered: Vec<&str> = super::options::TABLE
            .iter()
            .filter(|k| k.support == super::options::Support::Elsewhere)
            .map(|k| k.name)
            .filter(|name| super::flag_names::iopulse_name_of(name).is_none())
            .collect();
        assert!(unanswered.is_empty(), "options sent elsewhere without a flag name: {unanswered:?}");
    }
}
