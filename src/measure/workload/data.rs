//! The workloads' local data: one large file and a tree of small files, written once per
//! run into a private temp dir from the payload block, and the check that a downloaded
//! copy is the same, file for file and byte for byte.

use super::super::payload::Payload;
use crate::model::{Doing, FailureKind, Outcome, Problem, Shape, WorkloadSpec};
use crate::sys::scratch::Scratch;
use std::fs;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};

/// The prefix of the workloads' scratch directory (swept when a killed run left one).
const SCRATCH: &str = "sshbench-work.";

/// The files uploads read from (and downloads are compared with), in a scratch
/// directory that also holds each sample's own temporary files.
pub struct LocalData {
    dir: Scratch,
}

impl LocalData {
    /// Write both shapes: `file` and `tree/dNN/fNNNN`, each file a different stretch of
    /// the payload so that no two are alike.
    pub fn create(spec: &WorkloadSpec, payload: &Payload) -> std::io::Result<LocalData> {
        let dir = Scratch::create(SCRATCH)?;
        let mut out = BufWriter::new(fs::File::create(dir.path().join("file"))?);
        payload.write_repeated(&mut out, spec.file_bytes, 0)?;
        drop(out);
        let dirs = spec.tree_dirs();
        for i in 0..spec.tree_files {
            let sub = dir.path().join("tree").join(tree_dir(i % dirs));
            fs::create_dir_all(&sub)?;
            let mut f = fs::File::create(sub.join(format!("f{i:04}")))?;
            let offset = i as u64 * 7919 + 1;
            payload.write_repeated(&mut f, spec.tree_file_bytes, offset)?;
        }
        Ok(LocalData { dir })
    }

    /// The scratch directory itself.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// A fresh directory for one sample's temporary files (removed when dropped).
    pub fn sample_dir(&self, prefix: &str) -> std::io::Result<tempfile::TempDir> {
        tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(self.dir.path())
    }

    /// The local path of `shape`: the file, or the tree's directory.
    pub fn path(&self, shape: Shape) -> PathBuf {
        self.dir.path().join(match shape {
            Shape::File => "file",
            Shape::Tree => "tree",
        })
    }
}

/// The name of the tree's directory number `i` (the server's sftp clean-up and count
/// name them too).
pub fn tree_dir(i: u32) -> String {
    format!("d{i:02}")
}

/// Every regular file under `root` (or `root` itself), relative paths sorted.
fn files_under(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    if root.is_file() {
        return Ok(vec![PathBuf::new()]);
    }
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(root.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn same_content(a: &Path, b: &Path) -> std::io::Result<bool> {
    let (mut fa, mut fb) = (fs::File::open(a)?, fs::File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = fa.read(&mut ba)?;
        if n == 0 {
            return Ok(fb.read(&mut bb)? == 0);
        }
        fb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}

/// Compare a downloaded copy with the source: `Ok((files, bytes))` when every file is
/// there with the same bytes and nothing else is, else what differs.
pub fn verify_copy(source: &Path, copy: &Path) -> Result<(u64, u64), Outcome> {
    let io = |e: std::io::Error| Outcome::local(Doing::ReadingCopy, e);
    let want = files_under(source).map_err(io)?;
    let got = files_under(copy).map_err(io)?;
    if want != got {
        let files = Problem::Downloaded {
            files: got.len() as u64,
            expected: want.len() as u64,
        };
        return Err(Outcome::failed(FailureKind::ByteCount, files));
    }
    let mut bytes = 0;
    // A lone file's relative path is empty: the file is the root itself.
    let at = |root: &Path, rel: &Path| match rel.as_os_str().is_empty() {
        true => root.to_path_buf(),
        false => root.join(rel),
    };
    for rel in &want {
        let (a, b) = (at(source, rel), at(copy, rel));
        if !same_content(&a, &b).unwrap_or(false) {
            let path = b.display().to_string();
            return Err(Outcome::failed(
                FailureKind::ByteCount,
                Problem::CopyDiffers { path },
            ));
        }
        bytes += fs::metadata(&b).map_err(io)?.len();
    }
    Ok((want.len() as u64, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WorkloadSpec {
        WorkloadSpec {
            file_bytes: 100_000,
            tree_files: 250,
            tree_file_bytes: 1000,
            ..WorkloadSpec::default()
        }
    }

    #[test]
    fn both_shapes_are_written_as_stated() {
        let data = LocalData::create(&spec(), &Payload::random(4096, 3)).unwrap();
        assert_eq!(fs::metadata(data.path(Shape::File)).unwrap().len(), 100_000);
        let tree = files_under(&data.path(Shape::Tree)).unwrap();
        assert_eq!(tree.len(), 250);
        let dirs: std::collections::HashSet<_> = tree.iter().map(|p| p.parent()).collect();
        assert_eq!(dirs.len(), 3, "250 files over 3 directories");
        assert_eq!(
            verify_copy(&data.path(Shape::Tree), &data.path(Shape::Tree)),
            Ok((250, 250_000))
        );
        assert_eq!(
            verify_copy(&data.path(Shape::File), &data.path(Shape::File)),
            Ok((1, 100_000))
        );
    }

    #[test]
    fn a_copy_with_a_changed_missing_or_extra_file_is_caught() {
        let data = LocalData::create(&spec(), &Payload::random(4096, 3)).unwrap();
        let copy = tempfile::tempdir().unwrap();
        let dst = copy.path().join("tree");
        let cp = |from: &Path, to: &Path| {
            for rel in files_under(from).unwrap() {
                fs::create_dir_all(to.join(&rel).parent().unwrap()).unwrap();
                fs::copy(from.join(&rel), to.join(&rel)).unwrap();
            }
        };
        cp(&data.path(Shape::Tree), &dst);
        assert!(verify_copy(&data.path(Shape::Tree), &dst).is_ok());
        let victim = dst.join("d01").join("f0001");
        let mut bytes = fs::read(&victim).unwrap();
        bytes[10] ^= 1;
        fs::write(&victim, &bytes).unwrap();
        let problem = |o: Outcome| o.problem().cloned().unwrap();
        let differs = Problem::CopyDiffers {
            path: victim.display().to_string(),
        };
        let verified = || problem(verify_copy(&data.path(Shape::Tree), &dst).unwrap_err());
        assert_eq!(verified(), differs);
        fs::remove_file(&victim).unwrap();
        let downloaded = |files| Problem::Downloaded {
            files,
            expected: 250,
        };
        assert_eq!(verified(), downloaded(249));
        fs::copy(data.path(Shape::Tree).join("d01").join("f0001"), &victim).unwrap();
        fs::write(dst.join("extra"), b"x").unwrap();
        assert_eq!(verified(), downloaded(251));
    }
}
