//! Test-only fault injection for the io_uring engine: `IOPULSE_TEST_URING_FAULTS`
//! (docs/engines.md) makes `open` behave as if the kernel refused something, so that
//! every fallback and error message can be tested on a kernel that refuses nothing.
//!
//! Compiled in only where the tests use it: debug builds (`cargo test`) read the
//! variable once per process; release builds never read it and inject nothing.

#[cfg(any(test, debug_assertions))]
use super::messages::errno_by_name;
use super::ring_setup::SetupFlag;

/// The environment variable of the test-only fault injection.
#[cfg(any(test, debug_assertions))]
pub const FAULTS_ENV: &str = "IOPULSE_TEST_URING_FAULTS";

/// What the test-only fault injection asks `open` to pretend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// io_uring_setup fails with this errno (e.g. ENOSYS, EPERM).
    pub setup_errno: Option<i32>,
    /// The value read from /proc/sys/kernel/io_uring_disabled, instead of the real one.
    pub disabled: Option<u32>,
    /// io_uring_setup answers EINVAL while any of these flags is asked for.
    pub(super) refuse: Vec<SetupFlag>,
    /// Buffer registration fails with this errno (e.g. ENOMEM).
    pub register_buffers_errno: Option<i32>,
    /// File registration fails with this errno.
    pub register_files_errno: Option<i32>,
}

impl Faults {
    /// Parses `setup:ENOSYS,disabled:2,refuse:DEFER_TASKRUN,register_buffers:ENOMEM,register_files:EMFILE`.
    #[cfg(any(test, debug_assertions))]
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut faults = Faults::default();
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (key, value) =
                token.split_once(':').ok_or_else(|| format!("{FAULTS_ENV}: `{token}` is not KEY:VALUE"))?;
            let errno = || errno_by_name(value).ok_or_else(|| format!("{FAULTS_ENV}: unknown errno `{value}`"));
            match key {
                "setup" => faults.setup_errno = Some(errno()?),
                "disabled" => {
                    faults.disabled =
                        Some(value.parse().map_err(|_| format!("{FAULTS_ENV}: disabled:{value} is not a number"))?)
                }
                "refuse" => faults.refuse.push(
                    [SetupFlag::DeferTaskrun, SetupFlag::SingleIssuer, SetupFlag::CoopTaskrun, SetupFlag::TaskrunFlag]
                        .into_iter()
                        .find(|f| f.name() == value)
                        .ok_or_else(|| format!("{FAULTS_ENV}: unknown setup flag `{value}`"))?,
                ),
                "register_buffers" => faults.register_buffers_errno = Some(errno()?),
                "register_files" => faults.register_files_errno = Some(errno()?),
                _ => return Err(format!("{FAULTS_ENV}: unknown fault `{key}`")),
            }
        }
        Ok(faults)
    }
}

/// The faults this process injects: in debug builds what `IOPULSE_TEST_URING_FAULTS`
/// asks for (read once), in release builds none.
pub(super) fn injected() -> Result<&'static Faults, &'static String> {
    #[cfg(debug_assertions)]
    {
        static FROM_ENV: std::sync::OnceLock<Result<Faults, String>> = std::sync::OnceLock::new();
        FROM_ENV
            .get_or_init(|| match std::env::var(FAULTS_ENV) {
                Ok(text) => Faults::parse(&text),
                Err(_) => Ok(Faults::default()),
            })
            .as_ref()
    }
    #[cfg(not(debug_assertions))]
    {
        static NONE: Faults = Faults {
            setup_errno: None,
            disabled: None,
            refuse: Vec::new(),
            register_buffers_errno: None,
            register_files_errno: None,
        };
        Ok(&NONE)
    }
}
