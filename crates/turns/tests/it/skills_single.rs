//! An extra skill root that is one skill (issue 22: pi's `--skill`, a role's skills on a
//! `pincer rpc` worker): the skill's directory or its SKILL.md loads that skill alone, not
//! its siblings; a directory of skills still loads each.

use std::fs;
use std::path::Path;

use pincer_config::{SkillsConfig, SkillsLoad};
use pincer_turns::skills::{SkillDirs, load_skills};

fn write_skill(dir: &Path, name: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Does {name}\n---\n# {name}\n"),
    )
    .unwrap();
}

/// The names of the skills loaded with `extra` as the extra roots.
fn names(base: &Path, extra: &[&Path]) -> Vec<String> {
    let cfg = SkillsConfig {
        load: SkillsLoad {
            extra_dirs: extra.iter().map(|p| p.display().to_string()).collect(),
        },
    };
    let dirs = SkillDirs::new(&base.join("ws"), None, &base.join("pincer"), &cfg);
    let set = load_skills(&dirs);
    assert!(set.issues.is_empty(), "{:?}", set.issues);
    set.skills.iter().map(|s| s.name.clone()).collect()
}

#[test]
fn a_skill_directory_or_skill_md_as_a_root_is_that_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("lib");
    write_skill(&lib.join("deploy"), "deploy");
    write_skill(&lib.join("rollback"), "rollback");

    assert_eq!(names(tmp.path(), &[&lib.join("deploy")]), ["deploy"]);
    assert_eq!(
        names(tmp.path(), &[&lib.join("rollback/SKILL.md")]),
        ["rollback"]
    );
    assert_eq!(names(tmp.path(), &[&lib]), ["deploy", "rollback"]);
    assert_eq!(
        names(tmp.path(), &[&lib.join("missing")]),
        Vec::<String>::new()
    );
}
