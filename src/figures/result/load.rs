//! Reading a result file (`iopulse merge`, `iopulse plot`): bounded before it is decoded,
//! and its figures judged before anything adds or draws them.
//!
//! Only a regular file on a real filesystem of at most `MAX_RESULT_BYTES` is read, never a
//! FIFO or a socket (which block), a device (`/dev/zero` never ends), a directory or a
//! kernel interface such as /proc. The file is parsed as it is read (never held whole, never
//! as a `serde_json::Value` tree of itself, which takes about 18 times the text): `merge`
//! leaves every time series out while parsing (it merges none), `plot` reads the rows into
//! their typed form. A field that does not parse is named by its path (`total.ops`), a
//! figure no run can have (negative, 1e308 IOPS) by its path and value (`figures.rs`), and a
//! histogram blob whose header lies (`stats::decode_histogram`) by its path. A metadata
//! run's result (`kind: "iopulse-metadata"`) is told by its kind and judged as one
//! (`figures::check_metadata`).
//!
//! It reads and judges; it merges, draws and formats nothing.

use super::RunResult;
use super::field_path;
use super::figures;
use super::jobs::JobsResult;
use crate::figures::result::meta_document::MetaResult;
use crate::storage::targets::identity::{FileId, special_kind};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::Path;

/// The most read of one result. A result is a few MiB (64 workers and 4 targets: 70 KiB
/// without a time series); only a time series grows with the run, by about 70 KiB per
/// second at the shortest --interval (10 ms) and 0.7 KiB per second at the default 1 s, so
/// 256 MiB holds an hour at 10 ms and four days at 1 s. Anything larger is not a result: a
/// disk image or a log given by mistake.
pub const MAX_RESULT_BYTES: u64 = 256 << 20;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{file} cannot be read ({source}); give the JSON file written by `iopulse --json FILE`")]
    Read {
        file: String,
        #[source]
        source: io::Error,
    },
    #[error("{file}: {why}; give the JSON file written by `iopulse --json FILE`")]
    NotAResultFile { file: String, why: String },
    /// A metadata run's result where a block run's is read: a command that reads both
    /// (plot, report) takes it its own way, the others say where it goes.
    #[error("{file} is a metadata run's result (--files), {why}")]
    MetadataResult { file: String, why: &'static str },
    #[error("{file} is not an iopulse JSON result (iopulse --output-format json / --json): {what}")]
    Parse { file: String, what: String },
    #[error("{file}: {field}: {why}; give the JSON file written by `iopulse --json FILE`")]
    Histogram { file: String, field: String, why: String },
    #[error(
        "{file}: {field} is {value}, a figure no run has ({why}): the result was altered or damaged; give the JSON file written by `iopulse --json FILE`"
    )]
    Figure { file: String, field: String, value: String, why: &'static str },
}

/// A result as read from its file.
pub struct Loaded {
    /// The file as given.
    pub file: String,
    /// The file read (device and inode of the opened file).
    pub id: FileId,
    pub result: RunResult,
    /// The job-file document, when the file is the result of a job file (`iopulse run`);
    /// its top level is `result`.
    pub jobs: Option<JobsResult>,
}

/// A metadata run's result as read from its file (`iopulse DIR --files N --json FILE`).
pub struct LoadedMetadata {
    /// The file as given.
    pub file: String,
    /// The file read (device and inode of the opened file).
    pub id: FileId,
    pub result: MetaResult,
}

/// What a result file holds: a block run's result (or a job file's), or a metadata run's.
pub enum Document {
    Run(Box<Loaded>),
    Metadata(Box<LoadedMetadata>),
}

impl Document {
    pub fn file(&self) -> &str {
        match self {
            Document::Run(l) => &l.file,
            Document::Metadata(l) => &l.file,
        }
    }
}

/// Reads the result at `path` without any time series (what `merge` needs: the parsed
/// text holds everything but the rows, which are skipped as they are read), whichever
/// kind it is: a metadata run's result (`kind: "iopulse-metadata"`) is typed as
/// one and judged (`check_metadata`), anything else as a block run's.
pub fn document(path: &Path) -> Result<Document, LoadError> {
    let (file, opened) = open(path)?;
    let id = opened.id;
    let value = read_without_series(&file, &opened)?;
    if value.get("kind").and_then(Value::as_str) == Some(crate::figures::result::meta_document::KIND) {
        let result = typed::<MetaResult>(&file, &value)?;
        drop(value);
        check_metadata(&file, &result)?;
        return Ok(Document::Metadata(Box::new(LoadedMetadata { file, id, result })));
    }
    typed_loaded(file, id, value).map(|l| Document::Run(Box::new(l)))
}

/// The document of `opened`, every `time_series` array skipped as it is read.
fn read_without_series(file: &str, opened: &Opened) -> Result<Value, LoadError> {
    VALUES_READ.set(0);
    let mut reader = opened.reader();
    let mut de = serde_json::Deserializer::from_reader(&mut reader);
    let value = WithoutSeries.deserialize(&mut de);
    let end = value.as_ref().ok().map(|_| de.end());
    reader.check_size(file)?;
    let value = value.map_err(|e| parse_error(file, "", e))?;
    if let Some(Err(e)) = end {
        // A second document after a whole first one: the stdout of a job file of metadata
        // jobs (`iopulse run FILE --output-format json`) holds one per job.
        return Err(LoadError::NotAResultFile {
            file: file.to_string(),
            why: format!(
                "has more after its JSON result ({e}): the output of a job file of metadata jobs holds one result per job; give each in its own file (jq -c . {file} | split -l 1 - result-)"
            ),
        });
    }
    Ok(value)
}

/// Reads a metadata run's result at `path` whole, its time series included (what `report`
/// draws over time), bounded as every result is and judged as `document` judges it.
pub fn metadata_with_time_series(path: &Path) -> Result<LoadedMetadata, LoadError> {
    let (file, opened) = open(path)?;
    let mut reader = opened.reader();
    let result: Result<MetaResult, _> = from_reader_with_path(&mut reader);
    reader.check_size(&file)?;
    let result = result.map_err(|(at, e)| parse_error(&file, &at, e))?;
    check_metadata(&file, &result)?;
    Ok(LoadedMetadata { file, id: opened.id, result })
}

/// A block run's (or a job file's) result from its parsed document, judged.
fn typed_loaded(file: String, id: FileId, value: Value) -> Result<Loaded, LoadError> {
    if value.get("kind").and_then(Value::as_str) == Some(crate::figures::result::meta_document::KIND) {
        return Err(LoadError::MetadataResult {
            file,
            why: "where a block run's is needed: give it to `iopulse merge`, `compare`, `plot` or `report` on its own or with others of its kind",
        });
    }
    let jobs = match value.get("jobs") {
        Some(Value::Array(_)) => Some(typed::<JobsResult>(&file, &value)?),
        _ => None,
    };
    let result = typed::<RunResult>(&file, &value)?;
    drop(value);
    checked(Loaded { file, id, result, jobs })
}

/// Reads the result at `path` whole, time series included (what `plot` draws), each row
/// into its typed form as it is read.
pub fn with_time_series(path: &Path) -> Result<Loaded, LoadError> {
    let (file, mut opened) = open(path)?;
    let id = opened.id;
    // A first pass skips everything but the kind of `jobs`; the second reads the document
    // as what it is. Both hold no more than their typed result.
    let mut reader = opened.reader();
    let probe: Result<Probe, _> = serde_json::from_reader(&mut reader);
    reader.check_size(&file)?;
    let probe = probe.map_err(|e| parse_error(&file, "", e))?;
    if probe.kind.as_deref() == Some(crate::figures::result::meta_document::KIND) {
        return Err(LoadError::MetadataResult { file, why: "read with `load::metadata_with_time_series`" });
    }
    opened.rewind().map_err(|source| LoadError::Read { file: file.clone(), source })?;
    let mut reader = opened.reader();
    let loaded = if probe.jobs == Some(Shape::Array) {
        let doc: Result<JobsResult, _> = from_reader_with_path(&mut reader);
        reader.check_size(&file)?;
        let doc = doc.map_err(|(path, e)| named_again(&file, &mut opened, parse_error(&file, &path, e)))?;
        Loaded { file, id, result: doc.combined.clone(), jobs: Some(doc) }
    } else {
        let result: Result<RunResult, _> = from_reader_with_path(&mut reader);
        reader.check_size(&file)?;
        let result = result.map_err(|(path, e)| named_again(&file, &mut opened, parse_error(&file, &path, e)))?;
        Loaded { file, id, result, jobs: None }
    };
    checked(loaded)
}

/// A stream's parse error is named only up to a flattened section's holder: the file read
/// again as `merge` reads it (bounded, without its time series) names the field, unless
/// what failed was in the time series, which `first` names already.
fn named_again(file: &str, opened: &mut Opened, first: LoadError) -> LoadError {
    if opened.rewind().is_err() {
        return first;
    }
    match read_without_series(file, opened).and_then(|value| typed_loaded(file.to_string(), opened.id, value)) {
        Err(precise) => precise,
        Ok(_) => first,
    }
}

/// Every figure of `loaded` judged (`figures::check`) and every histogram decoded once
/// (`stats::decode_histogram`: header checked before anything is allocated): the first
/// absurd figure or bad blob refuses it, named.
fn checked(loaded: Loaded) -> Result<Loaded, LoadError> {
    let file = &loaded.file;
    check_result(file, "", &loaded.result)?;
    if let Some(doc) = &loaded.jobs {
        for (i, job) in doc.jobs.iter().enumerate() {
            check_result(file, &format!("jobs[{i}]"), &job.result)?;
        }
        for (i, phase) in doc.phases.iter().enumerate() {
            check_result(file, &format!("phases[{i}]"), &phase.combined)?;
        }
        for (i, job) in doc.metadata_jobs.iter().enumerate() {
            check_metadata(&format!("{file} metadata_jobs[{i}]"), &job.result)?;
        }
    }
    Ok(loaded)
}

/// The figures and histograms of a metadata run's result `r` read from `file` judged
/// (`figures::check_metadata`), the first fault named.
pub fn check_metadata(file: &str, r: &MetaResult) -> Result<(), LoadError> {
    figures::check_metadata(r).map_err(|fault| match fault {
        figures::MetaFault::Figure(a) => {
            LoadError::Figure { file: file.to_string(), field: a.field, value: a.value, why: a.why }
        }
        figures::MetaFault::Histogram { field, why } => LoadError::Histogram { file: file.to_string(), field, why },
    })
}

/// The figures and histograms of one result `r` found at path `at` of `file` judged, as
/// `checked` judges a whole file's (a sweep's runs, read by `iopulse compare`).
pub fn check_result(file: &str, at: &str, r: &RunResult) -> Result<(), LoadError> {
    let under = |field: String| if at.is_empty() { field } else { format!("{at}.{field}") };
    figures::check(r).map_err(|a| LoadError::Figure {
        file: file.to_string(),
        field: under(a.field),
        value: a.value,
        why: a.why,
    })?;
    for (field, blob) in histogram_blobs(r) {
        crate::io::stats::decode_histogram(blob).map_err(|e| LoadError::Histogram {
            file: file.to_string(),
            field: under(field),
            why: e.to_string(),
        })?;
    }
    Ok(())
}

/// Reads the JSON document at `path` as `document` reads a result (bounded,
/// every `time_series` array skipped), for documents that hold results without being one
/// (a sweep's): the caller types it (`typed_document`) and judges each result in it
/// (`check_result`).
pub fn document_without_time_series(path: &Path) -> Result<(String, Value), LoadError> {
    let (file, opened) = open(path)?;
    let value = read_without_series(&file, &opened)?;
    Ok((file, value))
}

/// `value` read from `file` as a `T`; a field that does not parse named by its path.
pub fn typed_document<T: serde::de::DeserializeOwned>(file: &str, value: &Value) -> Result<T, LoadError> {
    typed(file, value)
}

/// Each histogram blob of `r` with its path in the document.
fn histogram_blobs(r: &RunResult) -> Vec<(String, &str)> {
    let h = &r.histograms;
    let mut blobs = vec![("histograms.read".to_string(), h.read.as_str()), ("histograms.write".into(), &h.write)];
    blobs.extend(h.flush.as_deref().map(|b| ("histograms.flush".to_string(), b)));
    blobs.extend(h.trim.as_deref().map(|b| ("histograms.trim".to_string(), b)));
    for (i, size) in h.block_sizes.iter().enumerate() {
        blobs.push((format!("histograms.block_sizes[{i}].read"), &size.read));
        blobs.push((format!("histograms.block_sizes[{i}].write"), &size.write));
        blobs.extend(size.trim.as_deref().map(|b| (format!("histograms.block_sizes[{i}].trim"), b)));
    }
    blobs
}

fn typed<T: serde::de::DeserializeOwned>(file: &str, value: &Value) -> Result<T, LoadError> {
    field_path::typed(value).map_err(|e| parse_error(file, &e.path, e.error))
}

fn from_reader_with_path<T: serde::de::DeserializeOwned>(
    reader: &mut Counted<BufReader<io::Take<&File>>>,
) -> Result<T, (String, serde_json::Error)> {
    let mut de = serde_json::Deserializer::from_reader(reader);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| (e.path().to_string(), e.into_inner()))?;
    de.end().map_err(|e| (String::new(), e))?;
    Ok(value)
}

fn parse_error(file: &str, path: &str, e: serde_json::Error) -> LoadError {
    let what = if path.is_empty() || path == "." { e.to_string() } else { format!("{path}: {e}") };
    LoadError::Parse { file: file.to_string(), what }
}

/// An opened result file, judged by what was opened.
struct Opened {
    file: File,
    id: FileId,
}

impl Opened {
    fn reader(&self) -> Counted<BufReader<io::Take<&File>>> {
        // Bounded again while reading: the file may grow after fstat.
        Counted { inner: BufReader::with_capacity(1 << 16, (&self.file).take(MAX_RESULT_BYTES + 1)), read: 0 }
    }

    fn rewind(&mut self) -> io::Result<()> {
        self.file.rewind()
    }
}

/// Opens `path` as a result file: the name it was given by, and the file.
fn open(path: &Path) -> Result<(String, Opened), LoadError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = path.display().to_string();
    let not_a_result = |why: String| LoadError::NotAResultFile { file: file.clone(), why };
    if let Some(fs) = crate::storage::targets::pseudo_fs::pseudo_filesystem(path) {
        return Err(not_a_result(format!("is on {fs}, a kernel interface")));
    }
    // Judged by its type before opening (a socket cannot be opened at all), then opened
    // without blocking and judged again by what was opened (fstat): a FIFO with no writer
    // would block open(2) itself, and the path could be swapped for one in between.
    // O_NONBLOCK changes nothing for a regular file.
    if let Ok(meta) = std::fs::metadata(path)
        && let Some(what) = special_kind(meta.file_type())
    {
        return Err(not_a_result(format!("is {what}, not a file")));
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|source| LoadError::Read { file: file.clone(), source })?;
    let meta = opened.metadata().map_err(|source| LoadError::Read { file: file.clone(), source })?;
    if let Some(what) = special_kind(meta.file_type()) {
        return Err(not_a_result(format!("is {what}, not a file")));
    }
    if meta.len() > MAX_RESULT_BYTES {
        return Err(too_large(&file));
    }
    let id = FileId { dev: meta.dev(), ino: meta.ino() };
    Ok((file, Opened { file: opened, id }))
}

fn too_large(file: &str) -> LoadError {
    LoadError::NotAResultFile {
        file: file.to_string(),
        why: format!(
            "is larger than {} MiB, the most read of one result (a result is a few MiB; only a long time series makes it larger: merge does not use it, so remove it first: jq 'del(.time_series)')",
            MAX_RESULT_BYTES >> 20
        ),
    }
}

/// A reader that counts what it gave, to tell a file that grew past the bound while it was
/// read from a damaged one.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl<R> Counted<R> {
    fn check_size(&self, file: &str) -> Result<(), LoadError> {
        if self.read > MAX_RESULT_BYTES { Err(too_large(file)) } else { Ok(()) }
    }
}

/// The kind of the top-level `jobs` field: a job file's result has an array there.
#[derive(serde::Deserialize)]
struct Probe {
    #[serde(default)]
    jobs: Option<Shape>,
    /// `iopulse-metadata` for a metadata run's result.
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Debug, PartialEq)]
enum Shape {
    Array,
    Other,
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
        struct ShapeVisitor;
        impl<'de> Visitor<'de> for ShapeVisitor {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Shape::Array)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Shape::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
        }
        d.deserialize_any(ShapeVisitor)
    }
}

/// A JSON value as `serde_json::Value`, except that an array under a `time_series` key, at
/// any depth, is skipped as it is read (a run's, a job's, a rank's rows): what is kept is
/// the few KiB of figures, not the rows.
struct WithoutSeries;

/// The most values (array items and object entries) a document is read into outside its
/// time series: a tree of values takes many times its text, so a document of millions of
/// small values is refused rather than read into gigabytes (at most about 150 MB of values).
/// A sweep of 1,000 runs or a job file of 1,000 jobs holds about 2 Mi.
const MAX_VALUES: u64 = 4 << 20;

std::thread_local! {
    /// Values read so far into the document being read (`read_without_series`).
    static VALUES_READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// One more value read: an error once there are more than `MAX_VALUES`.
fn count_value<E: de::Error>() -> Result<(), E> {
    let n = VALUES_READ.get() + 1;
    VALUES_READ.set(n);
    if n > MAX_VALUES {
        return Err(E::custom(format!(
            "it holds more than {MAX_VALUES} values outside its time series, more than any result iopulse writes"
        )));
    }
    Ok(())
}

impl<'de> DeserializeSeed<'de> for WithoutSeries {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor { skip_arrays: false })
    }
}

/// A `time_series` key's value: `None` for an array (skipped), else the value (a spec's
/// `time_series` flag is a bool and stays).
struct SeriesOrValue;

impl<'de> DeserializeSeed<'de> for SeriesOrValue {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor { skip_arrays: true })
    }
}

/// Builds a `Value`; with `skip_arrays`, an array is read through and becomes `Null`.
struct ValueVisitor {
    skip_arrays: bool,
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        WithoutSeries.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.skip_arrays {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Value::Null);
        }
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(WithoutSeries)? {
            count_value::<A::Error>()?;
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            count_value::<A::Error>()?;
            let value = if key == "time_series" {
                map.next_value_seed(SeriesOrValue)?
            } else {
                map.next_value_seed(WithoutSeries)?
            };
            // A skipped series is left out: `time_series` defaults to no rows.
            if !(key == "time_series" && value.is_null()) {
                object.insert(key, value);
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        let mut de = serde_json::Deserializer::from_str(text);
        WithoutSeries.deserialize(&mut de).unwrap()
    }

    #[test]
    fn a_document_of_more_values_than_any_result_is_refused_before_it_is_all_read() {
        // As if the document so far had read all but two of its values.
        VALUES_READ.set(MAX_VALUES - 2);
        let mut de = serde_json::Deserializer::from_str(r#"{"a": [1, 2, 3]}"#);
        let e = WithoutSeries.deserialize(&mut de).unwrap_err().to_string();
        assert!(e.contains("more than 4194304 values"), "{e}");
        VALUES_READ.set(0);
        parse(r#"{"a": [1, 2, 3]}"#);
    }

    #[test]
    fn time_series_arrays_are_left_out_at_any_depth_and_other_values_stay() {
        let v = parse(
            r#"{"a": 1, "time_series": [{"t_ns": 1}], "spec": {"time_series": true, "x": [1, -2, 2.5]},
                "jobs": [{"job": "j", "time_series": [[1], [2]], "n": null}]}"#,
        );
        assert_eq!(
            v,
            serde_json::json!({"a": 1, "spec": {"time_series": true, "x": [1, -2, 2.5]}, "jobs": [{"job": "j", "n": null}]})
        );
    }

    #[test]
    fn the_probe_tells_a_job_files_result() {
        let p: Probe = serde_json::from_str(r#"{"x": [1, {"y": 2}], "jobs": [{"a": 1}]}"#).unwrap();
        assert_eq!(p.jobs, Some(Shape::Array));
        let p: Probe = serde_json::from_str(r#"{"jobs": {"a": 1}}"#).unwrap();
        assert_eq!(p.jobs, Some(Shape::Other));
        let p: Probe = serde_json::from_str(r#"{"x": 1}"#).unwrap();
        assert_eq!(p.jobs, None);
    }
}
