//! Where tools may touch the file system. An agent works in its workspace: relative paths
//! resolve there, and every path must stay inside the configured roots (the workspace by
//! default). `..`, absolute paths outside and symlinks that lead outside are refused with a
//! message that says which roots are allowed.

use std::path::{Component, Path, PathBuf};

/// A path outside the allowed roots, or one that cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{path} is outside the allowed directories ({roots}); use a path inside them")]
    OutsideRoots { path: String, roots: String },
    #[error("cannot resolve {path}: {reason}")]
    Unresolvable { path: String, reason: String },
}

/// The workspace (working directory for relative paths) and the roots tools may touch.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    workspace: PathBuf,
    roots: Vec<PathBuf>,
}

impl PathPolicy {
    /// Confined to the workspace. The workspace must exist (it is canonicalised).
    pub fn workspace(workspace: impl AsRef<Path>) -> Result<Self, PathError> {
        let workspace = canonical(workspace.as_ref())?;
        Ok(Self {
            roots: vec![workspace.clone()],
            workspace,
        })
    }

    /// Also allow `root` (must exist).
    pub fn with_root(mut self, root: impl AsRef<Path>) -> Result<Self, PathError> {
        self.roots.push(canonical(root.as_ref())?);
        Ok(self)
    }

    pub fn workspace_dir(&self) -> &Path {
        &self.workspace
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Resolve a path the model gave: relative to the workspace, `~` not expanded, every
    /// symlink followed, and the result inside a root. The path itself need not exist yet
    /// (for writes): its deepest existing ancestor is resolved and the rest appended,
    /// refusing `..` in the part that does not exist.
    pub fn resolve(&self, user_path: &str) -> Result<PathBuf, PathError> {
        let raw = Path::new(user_path);
        let joined = if raw.is_absolute() {
            raw.to_path_buf()
        } else {
            self.workspace.join(raw)
        };
        let resolved = resolve_existing_prefix(&joined)?;
        if self.roots.iter().any(|root| resolved.starts_with(root)) {
            Ok(resolved)
        } else {
            Err(PathError::OutsideRoots {
                path: user_path.to_owned(),
                roots: self
                    .roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    }

    /// The path as the model should see it: relative to the workspace when inside it.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

fn canonical(path: &Path) -> Result<PathBuf, PathError> {
    std::fs::canonicalize(path).map_err(|e| PathError::Unresolvable {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Canonicalise the longest existing prefix, then append the rest lexically.
fn resolve_existing_prefix(path: &Path) -> Result<PathBuf, PathError> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(mut base) => {
                for part in rest.iter().rev() {
                    base.push(part);
                }
                return Ok(base);
            }
            Err(_) => {
                let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                    return Err(PathError::Unresolvable {
                        path: path.display().to_string(),
                        reason: "no existing parent directory".into(),
                    });
                };
                // A `..` or `.` in the missing tail could climb out after the fact.
                if existing
                    .components()
                    .next_back()
                    .is_some_and(|c| !matches!(c, Component::Normal(_)))
                {
                    return Err(PathError::Unresolvable {
                        path: path.display().to_string(),
                        reason: "`..` after a directory that does not exist".into(),
                    });
                }
                rest.push(name);
                if !existing.pop() {
                    return Err(PathError::Unresolvable {
                        path: path.display().to_string(),
                        reason: "no existing parent directory".into(),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confines_paths_to_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join("a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        let policy = PathPolicy::workspace(&ws).unwrap();
        let ws = std::fs::canonicalize(&ws).unwrap();
        assert_eq!(policy.resolve("a.txt").unwrap(), ws.join("a.txt"));
        assert_eq!(policy.resolve("sub/../a.txt").unwrap(), ws.join("a.txt"));
        assert_eq!(
            policy.resolve("new/dir/file.txt").unwrap(),
            ws.join("new/dir/file.txt")
        );
        assert_eq!(
            policy.resolve(ws.join("a.txt").to_str().unwrap()).unwrap(),
            ws.join("a.txt")
        );
        let err = policy.resolve("../secret").unwrap_err().to_string();
        assert!(
            err.starts_with("../secret is outside the allowed directories ("),
            "{err}"
        );
        assert!(policy.resolve("/etc/passwd").is_err());
        assert!(policy.resolve("missing/../../secret").is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), ws.join("link")).unwrap();
            assert!(
                policy.resolve("link").is_err(),
                "a symlink out of the workspace is refused"
            );
            std::os::unix::fs::symlink(dir.path(), ws.join("dirlink")).unwrap();
            assert!(policy.resolve("dirlink/new-file").is_err());
        }
        assert_eq!(policy.display(&ws.join("sub/x")), "sub/x");
    }
}
