//! fio's zoned distributions (`random_distribution=zoned` and `zoned_abs`): the region is cut
//! into consecutive zones, and each zone receives a set share of the I/Os, drawn uniformly
//! inside it. `60/10:30/20:10/70` sends 60 % of the I/Os to the first 10 % of the region,
//! 30 % to the next 20 % and 10 % to the last 70 %; with absolute zones the second figure of
//! each pair is a size (`60/20M:40/1G`), and what lies after the last zone is never touched.
//!
//! As in fio, reads, writes and trims may each have their zones (`READS,WRITES[,TRIMS]`,
//! comma-separated; trims follow the writes when not given, and one set serves every
//! direction): `ZoneSets`. The worker draws an I/O's block after its direction.
//!
//! Parsing and checking happen at planning; drawing is a comparison per zone (at most
//! `MAX_ZONES`), two random numbers and one counter increment, with no allocation: the
//! counts of I/Os per zone are how the report shows the shares achieved.

use super::block_sizes::SizeFor;
use crate::base::primitives::rng::Rng;
use crate::base::units::parse_size;
use serde::{Deserialize, Serialize};

/// The most zones a distribution may have (fio has no limit; 16 keeps a draw cheap and
/// the zones inside the source without an allocation).
pub const MAX_ZONES: usize = 16;

/// What the second figure of each zone is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneExtent {
    /// A percentage of the region (`zoned`).
    Percent,
    /// A size in bytes from where the previous zone ended (`zoned_abs`).
    Bytes,
}

/// The zones of a zoned distribution, as asked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zones {
    extent: ZoneExtent,
    len: u8,
    io_percent: [f64; MAX_ZONES],
    /// Percent of the region or bytes, per `extent`.
    size: [f64; MAX_ZONES],
}

/// One zone, as the JSON shows it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Share of the I/Os, percent.
    pub io_percent: f64,
    /// Share of the region, percent (`zoned`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region_percent: Option<f64>,
    /// Size in bytes (`zoned_abs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
}

impl Zones {
    /// Parses fio's syntax: `IO%/REGION%:...` (or `IO%/SIZE:...` with `Bytes`). The I/O
    /// shares must add up to 100, and so must the region shares of `Percent` zones.
    pub fn parse(text: &str, extent: ZoneExtent) -> Result<Zones, String> {
        if text.contains(',') {
            return Err(format!("`{text}`: one set of zones here (a comma separates the sets of reads and writes)"));
        }
        let mut zones = Zones { extent, len: 0, io_percent: [0.0; MAX_ZONES], size: [0.0; MAX_ZONES] };
        let mut covered_bytes: u64 = 0;
        for (i, part) in text.split(':').map(str::trim).enumerate() {
            if i == MAX_ZONES {
                return Err(format!("`{text}`: at most {MAX_ZONES} zones"));
            }
            let (io, size) =
                part.split_once('/').ok_or_else(|| format!("`{part}` is not IO%/{}", size_word(extent)))?;
            let io: f64 = io.trim().trim_end_matches('%').parse().map_err(|_| format!("`{io}` is not a percentage"))?;
            if !(io.is_finite() && io > 0.0 && io <= 100.0) {
                return Err(format!("`{part}`: the share of I/Os must be above 0 and at most 100 %"));
            }
            let size = match extent {
                ZoneExtent::Percent => {
                    let p: f64 = size
                        .trim()
                        .trim_end_matches('%')
                        .parse()
                        .map_err(|_| format!("`{size}` is not a percentage"))?;
                    if !(p.is_finite() && p > 0.0 && p <= 100.0) {
                        return Err(format!("`{part}`: the share of the region must be above 0 and at most 100 %"));
                    }
                    p
                }
                ZoneExtent::Bytes => {
                    let b = parse_size(size.trim()).map_err(|e| format!("`{size}`: {e}"))?;
                    if b == 0 {
                        return Err(format!("`{part}`: a zone's size must be above 0"));
                    }
                    // The zones lie end to end: their sum is where the last one ends.
                    covered_bytes = covered_bytes.checked_add(b).ok_or_else(|| {
                        format!("`{text}`: the zones' sizes add up past 2^64 bytes, more than any target holds")
                    })?;
                    b as f64
                }
            };
            zones.io_percent[i] = io;
            zones.size[i] = size;
            zones.len += 1;
        }
        let io_sum: f64 = zones.io_percent().iter().sum();
        if (io_sum - 100.0).abs() > 1e-6 {
            return Err(format!("`{text}`: the shares of I/Os add up to {io_sum} %, not 100 %"));
        }
        if extent == ZoneExtent::Percent {
            let region_sum: f64 = zones.size[..zones.count()].iter().sum();
            if (region_sum - 100.0).abs() > 1e-6 {
                return Err(format!("`{text}`: the shares of the region add up to {region_sum} %, not 100 %"));
            }
        }
        Ok(zones)
    }

    /// How many zones (a parsed set has at least one).
    pub fn count(&self) -> usize {
        usize::from(self.len)
    }

    pub fn extent(&self) -> ZoneExtent {
        self.extent
    }

    pub fn io_percent(&self) -> &[f64] {
        &self.io_percent[..self.count()]
    }

    /// Bytes the zones cover when they are absolute (`None` for percentages; the sum was
    /// checked to fit when parsed).
    pub fn covered_bytes(&self) -> Option<u64> {
        (self.extent == ZoneExtent::Bytes)
            .then(|| self.size[..self.count()].iter().fold(0u64, |sum, &b| sum.saturating_add(b as u64)))
    }

    /// The smallest absolute zone, in bytes (`None` for percentages).
    pub fn smallest_bytes(&self) -> Option<u64> {
        (self.extent == ZoneExtent::Bytes)
            .then(|| self.size[..self.count()].iter().map(|&b| b as u64).min().unwrap_or(0))
    }

    /// The zones as the JSON shows them.
    pub fn zones(&self) -> Vec<Zone> {
        (0..self.count())
            .map(|i| Zone {
                io_percent: self.io_percent[i],
                region_percent: (self.extent == ZoneExtent::Percent).then_some(self.size[i]),
                size_bytes: (self.extent == ZoneExtent::Bytes).then_some(self.size[i] as u64),
            })
            .collect()
    }

    /// fio's syntax back (`60/10:30/20:10/70`, sizes in bytes for absolute zones).
    pub fn to_text(self) -> String {
        (0..self.count()).map(|i| format!("{}/{}", self.io_percent[i], self.size[i])).collect::<Vec<_>>().join(":")
    }
}

/// Zones per direction, as fio takes them: `READS,WRITES[,TRIMS]`; trims follow the
/// writes when not given, and one set given serves every direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZoneSets {
    /// Reads', writes' and trims' zones (`SizeFor` order).
    sets: [Zones; 3],
    /// How many sets were given (1 to 3).
    given: u8,
}

impl ZoneSets {
    /// Parses one set (`60/10:40/90`) or one per direction (`60/10:40/90,10/50:90/50`).
    /// Every set is of one kind (`extent`); the message names the set at fault.
    pub fn parse(text: &str, extent: ZoneExtent) -> Result<ZoneSets, String> {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 3 {
            return Err(format!(
                "`{text}`: {} comma-separated sets of zones: give one (all I/Os), two (reads,writes) or three (reads,writes,trims)",
                parts.len()
            ));
        }
        const WHOSE: [&str; 3] = ["reads'", "writes'", "trims'"];
        let mut sets = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let zones = Zones::parse(part.trim(), extent)
                .map_err(|e| if parts.len() == 1 { e } else { format!("the {} zones {e}", WHOSE[i]) })?;
            sets.push(zones);
        }
        let reads = sets[0];
        let writes = sets.get(1).copied().unwrap_or(reads);
        let trims = sets.get(2).copied().unwrap_or(writes);
        Ok(ZoneSets { sets: [reads, writes, trims], given: parts.len() as u8 })
    }

    /// One set for every direction.
    pub fn one(zones: Zones) -> ZoneSets {
        ZoneSets { sets: [zones; 3], given: 1 }
    }

    /// The sets given, in order (reads first): one, two or three.
    pub fn given(&self) -> &[Zones] {
        &self.sets[..usize::from(self.given)]
    }

    /// Whether the directions have zones of their own.
    pub fn per_direction(&self) -> bool {
        self.given > 1
    }

    /// The zones of I/Os of direction `of`.
    pub fn of(&self, of: SizeFor) -> &Zones {
        &self.sets[of as usize]
    }

    pub fn extent(&self) -> ZoneExtent {
        self.sets[0].extent
    }

    /// Bytes the furthest set covers when they are absolute (`None` for percentages).
    pub fn covered_bytes(&self) -> Option<u64> {
        self.given().iter().filter_map(Zones::covered_bytes).max()
    }

    /// The smallest absolute zone of any set, in bytes (`None` for percentages).
    pub fn smallest_bytes(&self) -> Option<u64> {
        self.given().iter().filter_map(Zones::smallest_bytes).min()
    }

    /// fio's syntax back, the sets given joined by commas.
    pub fn to_text(self) -> String {
        self.given().iter().map(|z| z.to_text()).collect::<Vec<_>>().join(",")
    }
}

/// A spec's zones in the JSON: one set as a list of zones (as before sets per direction
/// existed), several as a list of such lists.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ZoneSetsJson {
    One(Box<Zones>),
    PerDirection(Vec<Zones>),
}

impl Serialize for ZoneSets {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.per_direction() {
            ZoneSetsJson::PerDirection(self.given().to_vec()).serialize(s)
        } else {
            ZoneSetsJson::One(Box::new(self.sets[0])).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for ZoneSets {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ZoneSets, D::Error> {
        match ZoneSetsJson::deserialize(d)? {
            ZoneSetsJson::One(zones) => Ok(ZoneSets::one(*zones)),
            ZoneSetsJson::PerDirection(sets) if (1..=3).contains(&sets.len()) => {
                let text = sets.iter().map(|z| z.to_text()).collect::<Vec<_>>().join(",");
                ZoneSets::parse(&text, sets[0].extent).map_err(serde::de::Error::custom)
            }
            ZoneSetsJson::PerDirection(sets) => {
                Err(serde::de::Error::custom(format!("{} sets of zones: one to three", sets.len())))
            }
        }
    }
}

fn size_word(extent: ZoneExtent) -> &'static str {
    match extent {
        ZoneExtent::Percent => "REGION%",
        ZoneExtent::Bytes => "SIZE",
    }
}

impl Serialize for Zones {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.zones().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Zones {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Zones, D::Error> {
        let zones = Vec::<Zone>::deserialize(d)?;
        let extent = if zones.iter().all(|z| z.size_bytes.is_some()) { ZoneExtent::Bytes } else { ZoneExtent::Percent };
        let text = zones
            .iter()
            .map(|z| match extent {
                ZoneExtent::Bytes => format!("{}/{}", z.io_percent, z.size_bytes.unwrap_or(0)),
                ZoneExtent::Percent => format!("{}/{}", z.io_percent, z.region_percent.unwrap_or(0.0)),
            })
            .collect::<Vec<_>>()
            .join(":");
        Zones::parse(&text, extent).map_err(serde::de::Error::custom)
    }
}

/// Draws blocks zone by zone and counts the I/Os each zone received: one draw per set of
/// zones given (`ZoneSets`), an I/O drawn from its direction's.
#[derive(Clone, Debug)]
pub struct ZonedSource {
    /// One per set given: reads', writes', trims'.
    draws: [ZoneDraw; 3],
    /// The draw of each direction (`SizeFor` order): all 0 with one set.
    draw_of: [u8; 3],
    given: usize,
    region_blocks: u64,
}

/// The zones of one set over the region.
#[derive(Clone, Debug)]
struct ZoneDraw {
    len: usize,
    /// Cumulative share of the I/Os up to and including each zone, out of `SCALE`.
    below: [u64; MAX_ZONES],
    first_block: [u64; MAX_ZONES],
    blocks: [u64; MAX_ZONES],
    counts: [u64; MAX_ZONES],
    rng: Rng,
}

const SCALE: u64 = 1 << 32;

impl ZonedSource {
    /// The zones over a region of `region_blocks` blocks of `block_bytes` each. Every zone
    /// gets at least one block (a region smaller than its zones repeats blocks); absolute
    /// zones beyond the region are cut at its end (the plan refuses them where it knows the
    /// region's size). Each set draws from its own stream of `rng`.
    pub fn new(sets: &ZoneSets, region_blocks: u64, block_bytes: u64, rng: Rng) -> ZonedSource {
        let given = sets.given();
        // The first set keeps the stream a single set always had; the others are seeded
        // from a copy of it, each a stream of its own.
        let seed = rng.clone().next_u64();
        let (r1, r2) = (Rng::new(seed, 0x2a0e_d001), Rng::new(seed, 0x2a0e_d002));
        let r0 = rng;
        let draw = |i: usize, rng: Rng| ZoneDraw::new(&given[i.min(given.len() - 1)], region_blocks, block_bytes, rng);
        let draw_of = match given.len() {
            1 => [0, 0, 0],
            2 => [0, 1, 1],
            _ => [0, 1, 2],
        };
        ZonedSource { draws: [draw(0, r0), draw(1, r1), draw(2, r2)], draw_of, given: given.len(), region_blocks }
    }

    /// The next block of an I/O of direction `of`.
    #[inline(always)]
    pub fn next_block(&mut self, of: SizeFor) -> u64 {
        let d = &mut self.draws[usize::from(self.draw_of[of as usize])];
        let r = d.rng.below(SCALE);
        let mut zone = 0;
        while zone + 1 < d.len && r >= d.below[zone] {
            zone += 1;
        }
        d.counts[zone] += 1;
        d.first_block[zone] + d.rng.below(d.blocks[zone])
    }

    pub fn region_blocks(&self) -> u64 {
        self.region_blocks
    }

    /// I/Os drawn per zone so far, set after set (the reads' zones first).
    pub fn counts(&self) -> Vec<u64> {
        self.draws[..self.given].iter().flat_map(|d| d.counts[..d.len].iter().copied()).collect()
    }
}

impl ZoneDraw {
    fn new(zones: &Zones, region_blocks: u64, block_bytes: u64, rng: Rng) -> ZoneDraw {
        let n = zones.count();
        let mut s = ZoneDraw {
            len: n,
            below: [0; MAX_ZONES],
            first_block: [0; MAX_ZONES],
            blocks: [0; MAX_ZONES],
            counts: [0; MAX_ZONES],
            rng,
        };
        let mut io_cumulative = 0.0;
        let mut size_cumulative = 0.0;
        for i in 0..n {
            io_cumulative += zones.io_percent[i];
            s.below[i] = if i + 1 == n { SCALE } else { (io_cumulative / 100.0 * SCALE as f64) as u64 };
            let start = boundary(zones, size_cumulative, region_blocks, block_bytes);
            size_cumulative += zones.size[i];
            let end = boundary(zones, size_cumulative, region_blocks, block_bytes);
            let first = start.min(region_blocks - 1);
            s.first_block[i] = first;
            s.blocks[i] = end.saturating_sub(first).max(1).min(region_blocks - first);
        }
        s
    }
}

/// The block where a cumulative extent ends, inside the region: a share of the region's
/// blocks rounded to the nearest block, or a size cut down to whole blocks.
fn boundary(zones: &Zones, cumulative: f64, region_blocks: u64, block_bytes: u64) -> u64 {
    let blocks = match zones.extent {
        ZoneExtent::Percent => (cumulative / 100.0 * region_blocks as f64).round() as u64,
        ZoneExtent::Bytes => (cumulative as u64) / block_bytes.max(1),
    };
    blocks.min(region_blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_syntax_parses_and_bad_zones_are_refused_naming_them() {
        let z = Zones::parse("60/10:30/20:10/70", ZoneExtent::Percent).unwrap();
        assert_eq!(z.count(), 3);
        assert_eq!(z.to_text(), "60/10:30/20:10/70");
        let abs = Zones::parse("60/20M:40/1G", ZoneExtent::Bytes).unwrap();
        assert_eq!(abs.covered_bytes(), Some(20 * 1024 * 1024 + 1024 * 1024 * 1024));
        for (bad, says) in [
            ("60/10:30/20", "add up to 90 %"),
            ("60/10:40/20", "region add up to 30 %"),
            ("60:40/100", "not IO%/REGION%"),
            ("0/10:100/90", "above 0"),
            ("60/10:40/90,50/50:50/50", "one set of zones here"),
            ("x/10:100/90", "not a percentage"),
        ] {
            let e = Zones::parse(bad, ZoneExtent::Percent).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let many = vec!["1/1"; 17].join(":");
        assert!(Zones::parse(&many, ZoneExtent::Percent).unwrap_err().contains("at most 16 zones"));
    }

    #[test]
    fn sets_per_direction_parse_trims_follow_the_writes_and_bad_sets_are_named() {
        let one = ZoneSets::parse("60/10:40/90", ZoneExtent::Percent).unwrap();
        assert!(!one.per_direction());
        assert_eq!(one.of(SizeFor::Write), one.of(SizeFor::Read));
        let two = ZoneSets::parse("60/10:40/90,10/50:90/50", ZoneExtent::Percent).unwrap();
        assert!(two.per_direction());
        assert_eq!(two.given().len(), 2);
        assert_eq!(two.of(SizeFor::Trim), two.of(SizeFor::Write));
        assert_eq!(two.of(SizeFor::Write).io_percent(), &[10.0, 90.0]);
        assert_eq!(two.to_text(), "60/10:40/90,10/50:90/50");
        let e = ZoneSets::parse("60/10:40/90,10/50:80/50", ZoneExtent::Percent).unwrap_err();
        assert!(e.starts_with("the writes' zones") && e.contains("add up to 90 %"), "{e}");
        let e = ZoneSets::parse("100/100,100/100,100/100,100/100", ZoneExtent::Percent).unwrap_err();
        assert!(e.contains("4 comma-separated sets"), "{e}");
        let abs = ZoneSets::parse("50/64k:50/64k,100/1m", ZoneExtent::Bytes).unwrap();
        assert_eq!(abs.covered_bytes(), Some(1 << 20));
        for sets in [one, two, abs] {
            let json = serde_json::to_string(&sets).unwrap();
            assert_eq!(serde_json::from_str::<ZoneSets>(&json).unwrap(), sets, "{json}");
        }
    }

    #[test]
    fn each_direction_draws_from_its_own_zones() {
        let sets = ZoneSets::parse("90/10:10/90,10/10:90/90", ZoneExtent::Percent).unwrap();
        let mut s = ZonedSource::new(&sets, 1_000, 4096, Rng::new(3, 4));
        let n: u32 = 100_000;
        let (mut reads_low, mut writes_low) = (0, 0);
        for _ in 0..n {
            reads_low += u32::from(s.next_block(SizeFor::Read) < 100);
            writes_low += u32::from(s.next_block(SizeFor::Write) < 100);
            // Trims follow the writes' zones.
            s.next_block(SizeFor::Trim);
        }
        let share = |k: u32| f64::from(k) * 100.0 / f64::from(n);
        assert!((share(reads_low) - 90.0).abs() < 1.0, "reads in the first tenth: {} %", share(reads_low));
        assert!((share(writes_low) - 10.0).abs() < 1.0, "writes in the first tenth: {} %", share(writes_low));
        let counts = s.counts();
        assert_eq!(counts.len(), 4, "two zones of each set given");
        assert_eq!(counts[0] + counts[1], u64::from(n));
        assert_eq!(counts[2] + counts[3], 2 * u64::from(n), "writes and trims");
    }

    #[test]
    fn the_zones_get_their_shares_of_the_ios_and_stay_inside_their_blocks() {
        let z = ZoneSets::parse("60/10:30/20:10/70", ZoneExtent::Percent).unwrap();
        let mut s = ZonedSource::new(&z, 10_000, 4096, Rng::new(7, 1));
        let mut hits = [0u64; 3];
        let n = 200_000;
        for _ in 0..n {
            let b = s.next_block(SizeFor::Read);
            let zone = if b < 1_000 {
                0
            } else if b < 3_000 {
                1
            } else {
                2
            };
            hits[zone] += 1;
        }
        assert_eq!(s.counts(), hits, "the counts are the zones the blocks fell in");
        for (i, asked) in [60.0, 30.0, 10.0].into_iter().enumerate() {
            let got = hits[i] as f64 * 100.0 / n as f64;
            assert!((got - asked).abs() < 0.5, "zone {i}: {got} % for {asked} %");
        }
    }

    #[test]
    fn absolute_zones_leave_the_rest_of_the_region_untouched() {
        let z = ZoneSets::parse("50/64k:50/64k", ZoneExtent::Bytes).unwrap();
        let mut s = ZonedSource::new(&z, 1_000, 4096, Rng::new(1, 2));
        for _ in 0..10_000 {
            assert!(s.next_block(SizeFor::Write) < 32, "two zones of 16 blocks each");
        }
    }

    #[test]
    fn zones_survive_their_json() {
        for (text, extent) in [("60/10:40/90", ZoneExtent::Percent), ("60/8192:40/4096", ZoneExtent::Bytes)] {
            let z = Zones::parse(text, extent).unwrap();
            let json = serde_json::to_string(&z).unwrap();
            assert_eq!(serde_json::from_str::<Zones>(&json).unwrap(), z, "{json}");
        }
    }
}
