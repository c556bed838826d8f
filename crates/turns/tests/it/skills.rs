//! Skills through the public API: frontmatter, precedence between roots, problems reported
//! without failing the load, and the prompt listing.

use std::fs;
use std::path::{Path, PathBuf};

use pincer_config::{SkillsConfig, SkillsLoad};
use pincer_turns::skills::{
    FrontmatterError, ParsedSkill, Skill, SkillDirs, SkillIssue, SkillProblem, SkillRoot,
    SkillSource, format_skills_for_prompt, load_skills, parse_skill,
};
use serde_json::json;

fn ok(name: &str, description: &str) -> ParsedSkill {
    ParsedSkill {
        name: name.into(),
        description: description.into(),
        user_invocable: true,
        disable_model_invocation: false,
        metadata: None,
        metadata_problem: None,
    }
}

#[test]
fn frontmatter_subset_parses_exactly() {
    let cases: Vec<(&str, ParsedSkill)> = vec![
        (
            "---\nname: pdf\ndescription: Read PDFs\n---\nbody",
            ok("pdf", "Read PDFs"),
        ),
        (
            "\u{feff}---\r\nname: pdf\r\ndescription: Read PDFs # inline comment\r\n---\r\n",
            ok("pdf", "Read PDFs"),
        ),
        (
            "---\n# a comment\nname: 'it''s'\ndescription: \"Say \\\"hi\\\" \\u00e9\"\n---\n",
            ok("it's", "Say \"hi\" é"),
        ),
        (
            "---\nname: pdf\ndescription: Reads PDFs\n  and extracts tables\n---\n",
            ok("pdf", "Reads PDFs and extracts tables"),
        ),
        (
            "---\nname: pdf\ndescription: >\n  Folded\n  text\n\n  Second\n---\n",
            ok("pdf", "Folded text\nSecond"),
        ),
        (
            "---\nname: pdf\ndescription: |-\n  line one\n  line two\n---\n",
            ok("pdf", "line one\nline two"),
        ),
        (
            "---\nname: x\ndescription: y\nlicense: MIT\nallowed-tools:\n  - read\n  - exec\n...\n",
            ok("x", "y"),
        ),
        (
            "---\nname: x\ndescription: y\nuser-invocable: False\ndisable-model-invocation: true\n---\n",
            ParsedSkill {
                user_invocable: false,
                disable_model_invocation: true,
                ..ok("x", "y")
            },
        ),
        (
            "---\nname: x\ndescription: y\nmetadata: {\"openclaw\":{\"requires\":{\"bins\":[\"uv\"]}}}\n---\n",
            ParsedSkill {
                metadata: Some(json!({"openclaw": {"requires": {"bins": ["uv"]}}})),
                ..ok("x", "y")
            },
        ),
        // OpenClaw's documented multi-line metadata, trailing commas and all.
        (
            "---\nname: x\ndescription: y\nmetadata:\n  {\n    \"openclaw\":\n      { \"emoji\": \"♊️\", },\n  }\n---\n",
            ParsedSkill {
                metadata: Some(json!({"openclaw": {"emoji": "♊️"}})),
                ..ok("x", "y")
            },
        ),
        (
            "---\nname: x\ndescription: y\nmetadata: [1, 2]\n---\n",
            ParsedSkill {
                metadata_problem: Some(SkillProblem::InvalidMetadata {
                    error: "expected an object".into(),
                }),
                ..ok("x", "y")
            },
        ),
    ];
    for (content, expected) in cases {
        assert_eq!(parse_skill(content).unwrap(), expected, "{content:?}");
    }
}

#[test]
fn frontmatter_problems_are_named() {
    let unsupported =
        |line, reason| SkillProblem::Frontmatter(FrontmatterError::Unsupported { line, reason });
    let cases = [
        (
            "# Title\nname: x",
            SkillProblem::Frontmatter(FrontmatterError::Missing),
        ),
        ("", SkillProblem::Frontmatter(FrontmatterError::Missing)),
        (
            "---\nname: x\ndescription: y\n",
            SkillProblem::Frontmatter(FrontmatterError::Unterminated),
        ),
        ("---\ndescription: y\n---\n", SkillProblem::MissingName),
        (
            "---\nname: \"  \"\ndescription: y\n---\n",
            SkillProblem::MissingName,
        ),
        ("---\nname: x\n---\n", SkillProblem::MissingDescription),
        (
            "---\nname: x\ndescription: y\ndisable-model-invocation: yes\n---\n",
            SkillProblem::InvalidBoolean {
                key: "disable-model-invocation".into(),
                value: "yes".into(),
            },
        ),
        (
            "---\nname: x\ndescription: \"unterminated\n---\n",
            unsupported(3, "an unterminated or malformed quoted value"),
        ),
        (
            "---\nname: x\n- item\n---\n",
            unsupported(3, "expected `key: value`"),
        ),
        (
            "---\n  indented: x\n---\n",
            unsupported(2, "an indented line that continues no key"),
        ),
        (
            "---\nname: *alias\n---\n",
            unsupported(2, "YAML anchors, aliases and tags are not supported"),
        ),
        (
            "---\nname: x\ndescription: 'a'\n  'b'\n---\n",
            unsupported(3, "quoted values must fit on one line"),
        ),
    ];
    for (content, expected) in cases {
        assert_eq!(parse_skill(content), Err(expected), "{content:?}");
    }
}

fn write_skill(root: &Path, dir: &str, name: &str, description: &str) -> PathBuf {
    write_raw(
        root,
        dir,
        &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    )
}

fn write_raw(root: &Path, dir: &str, content: &str) -> PathBuf {
    let skill_dir = root.join(dir);
    fs::create_dir_all(&skill_dir).unwrap();
    let file = skill_dir.join("SKILL.md");
    fs::write(&file, content).unwrap();
    file
}

struct Layout {
    _tmp: tempfile::TempDir,
    workspace: PathBuf,
    home: PathBuf,
    pincer_home: PathBuf,
    extra: PathBuf,
}

fn layout() -> Layout {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().to_path_buf();
    Layout {
        workspace: base.join("ws"),
        home: base.join("home"),
        pincer_home: base.join("pincer"),
        extra: base.join("extra"),
        _tmp: tmp,
    }
}

impl Layout {
    fn dirs(&self) -> SkillDirs {
        let cfg = SkillsConfig {
            load: SkillsLoad {
                extra_dirs: vec![self.extra.to_string_lossy().into_owned()],
            },
        };
        SkillDirs::new(&self.workspace, Some(&self.home), &self.pincer_home, &cfg)
    }
}

#[test]
fn higher_roots_hide_lower_skills_of_the_same_name() {
    let l = layout();
    let ws_skills = l.workspace.join("skills");
    let ws_agents = l.workspace.join(".agents/skills");
    let personal = l.home.join(".agents/skills");
    let managed = l.pincer_home.join("skills");
    let a = write_skill(&ws_skills, "a", "a", "workspace a");
    let a2 = write_skill(&ws_agents, "a", "a", "project a");
    let b = write_skill(&ws_agents, "b", "b", "project b");
    let b2 = write_skill(&personal, "b-copy", "b", "personal b");
    let c = write_skill(&personal, "c", "c", "personal c");
    let c2 = write_skill(&managed, "c", "c", "managed c");
    let d = write_skill(&managed, "d", "d", "managed d");
    let d2 = write_skill(&l.extra, "d", "d", "extra d");
    let e = write_skill(&l.extra, "e", "e", "extra e");

    let set = load_skills(&l.dirs());
    let got: Vec<(&str, &str, SkillSource, &Path)> = set
        .skills
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.description.as_str(),
                s.source,
                s.location.as_path(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", "workspace a", SkillSource::Workspace, a.as_path()),
            ("b", "project b", SkillSource::WorkspaceAgents, b.as_path()),
            ("c", "personal c", SkillSource::PersonalAgents, c.as_path()),
            ("d", "managed d", SkillSource::Managed, d.as_path()),
            ("e", "extra e", SkillSource::Extra, e.as_path()),
        ]
    );
    let shadowed = |path: &Path, by: &Path| SkillIssue {
        path: path.to_path_buf(),
        problem: SkillProblem::Shadowed {
            by: by.to_path_buf(),
        },
    };
    assert_eq!(
        set.issues,
        vec![
            shadowed(&a2, &a),
            shadowed(&b2, &b),
            shadowed(&c2, &c),
            shadowed(&d2, &d)
        ]
    );
    assert!(set.issues.iter().all(SkillIssue::skill_skipped));
    assert_eq!(set.get("c").unwrap().base_dir, personal.join("c"));
}

#[test]
fn bad_skills_are_reported_and_skipped_never_fatal() {
    let l = layout();
    let root = l.workspace.join("skills");
    let good = write_skill(&root, "good", "good", "works");
    let no_front = write_raw(&root, "no-front", "# Just markdown\n");
    let no_name = write_raw(&root, "no-name", "---\ndescription: d\n---\n");
    let no_desc = write_raw(&root, "no-desc", "---\nname: n\n---\n");
    let bad_meta = write_raw(
        &root,
        "bad-meta",
        "---\nname: meta\ndescription: d\nmetadata: {oops\n---\n",
    );
    let binary = root.join("binary/SKILL.md");
    fs::create_dir_all(binary.parent().unwrap()).unwrap();
    fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let huge = root.join("huge/SKILL.md");
    fs::create_dir_all(huge.parent().unwrap()).unwrap();
    fs::write(&huge, "x".repeat(1024 * 1024 + 1)).unwrap();
    // Not skills: hidden directories, node_modules, a directory without SKILL.md, a loose file.
    write_skill(&root, ".hidden", "hidden", "h");
    write_skill(&root, "node_modules", "nm", "n");
    fs::create_dir_all(root.join("empty")).unwrap();
    fs::write(
        root.join("SKILL.md"),
        "---\nname: loose\ndescription: l\n---\n",
    )
    .unwrap();

    let set = load_skills(&l.dirs());
    let names: Vec<&str> = set.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["meta", "good"]);
    assert_eq!(set.get("good").unwrap().location, good);
    assert_eq!(set.get("meta").unwrap().metadata, None);

    let issue = |path: &Path, problem| SkillIssue {
        path: path.to_path_buf(),
        problem,
    };
    let meta_error = match &set.issues[0].problem {
        SkillProblem::InvalidMetadata { error } => error.clone(),
        other => panic!("expected InvalidMetadata first, got {other:?}"),
    };
    assert_eq!(
        set.issues,
        vec![
            issue(
                &bad_meta,
                SkillProblem::InvalidMetadata { error: meta_error }
            ),
            issue(
                &binary,
                SkillProblem::Unreadable {
                    error: "not UTF-8 text".into()
                }
            ),
            issue(
                &huge,
                SkillProblem::TooLarge {
                    bytes: 1024 * 1024 + 1
                }
            ),
            issue(&no_desc, SkillProblem::MissingDescription),
            issue(
                &no_front,
                SkillProblem::Frontmatter(FrontmatterError::Missing)
            ),
            issue(&no_name, SkillProblem::MissingName),
        ]
    );
    let skipped: Vec<bool> = set.issues.iter().map(SkillIssue::skill_skipped).collect();
    assert_eq!(skipped, [false, true, true, true, true, true]);
    assert_eq!(
        set.issues[3].to_string(),
        format!(
            "{}: the frontmatter has no `description`",
            no_desc.display()
        )
    );
    assert_eq!(
        set.issues[4].to_string(),
        format!(
            "{}: no frontmatter (the file must start with `---`)",
            no_front.display()
        )
    );
}

#[test]
fn roots_follow_precedence_and_expand_extra_dirs() {
    let cfg = SkillsConfig {
        load: SkillsLoad {
            extra_dirs: vec![
                "~/shared".into(),
                "rel/skills".into(),
                " ".into(),
                "/abs".into(),
            ],
        },
    };
    let dirs = SkillDirs::new(
        Path::new("/ws"),
        Some(Path::new("/home/u")),
        Path::new("/ph"),
        &cfg,
    );
    let roots: Vec<(SkillSource, PathBuf)> = dirs
        .roots()
        .into_iter()
        .map(|SkillRoot { source, dir }| (source, dir))
        .collect();
    let expected: Vec<(SkillSource, PathBuf)> = [
        (SkillSource::Workspace, "/ws/skills"),
        (SkillSource::WorkspaceAgents, "/ws/.agents/skills"),
        (SkillSource::PersonalAgents, "/home/u/.agents/skills"),
        (SkillSource::Managed, "/ph/skills"),
        (SkillSource::Extra, "/home/u/shared"),
        (SkillSource::Extra, "/ph/rel/skills"),
        (SkillSource::Extra, "/abs"),
    ]
    .into_iter()
    .map(|(s, p)| (s, PathBuf::from(p)))
    .collect();
    assert_eq!(roots, expected);

    // Without a known home there is no personal root.
    let no_home = SkillDirs::new(
        Path::new("/ws"),
        None,
        Path::new("/ph"),
        &SkillsConfig::default(),
    );
    let sources: Vec<SkillSource> = no_home.roots().iter().map(|r| r.source).collect();
    assert_eq!(
        sources,
        [
            SkillSource::Workspace,
            SkillSource::WorkspaceAgents,
            SkillSource::Managed
        ]
    );
}

/// pi's `--no-skills` with `--skill` paths: only those paths are searched, even with
/// skills in every standard root.
#[test]
fn without_discovery_only_the_given_paths_are_searched() {
    let l = layout();
    for (i, root) in [
        l.workspace.join("skills"),
        l.home.join(".agents/skills"),
        l.pincer_home.join("skills"),
        l.extra.clone(),
    ]
    .iter()
    .enumerate()
    {
        write_skill(root, &format!("s{i}"), &format!("s{i}"), "found");
    }
    let given = write_skill(&l.workspace, "given", "given", "the given one")
        .parent()
        .unwrap()
        .to_path_buf();
    let dirs = l.dirs().only(vec![given.clone()]);
    assert_eq!(
        dirs.roots(),
        [SkillRoot {
            source: SkillSource::Extra,
            dir: given
        }]
    );
    let names: Vec<String> = load_skills(&dirs)
        .skills
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["given"]);
    assert!(load_skills(&l.dirs().only(Vec::new())).skills.is_empty());
    // With discovery (the default) the standard roots are found too.
    assert_eq!(load_skills(&l.dirs()).skills.len(), 4);
}

fn skill(name: &str, description: &str, location: &str, hidden: bool) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        location: PathBuf::from(location),
        base_dir: PathBuf::from(location).parent().unwrap().to_path_buf(),
        source: SkillSource::Workspace,
        user_invocable: true,
        disable_model_invocation: hidden,
        metadata: None,
    }
}

#[test]
fn the_prompt_listing_is_openclaws_xml_block() {
    let skills = [
        skill(
            "pdf",
            "Read <PDF> & \"extract\"\n  tables",
            "/ws/skills/pdf/SKILL.md",
            false,
        ),
        skill(
            "secret",
            "Only by command",
            "/ws/skills/secret/SKILL.md",
            true,
        ),
        skill(
            "o'brien",
            "Irish things",
            "/ws/skills/o'brien/SKILL.md",
            false,
        ),
    ];
    // The intro names the read tool; the list escapes XML and leaves out the hidden skill.
    let intro = "\
The following skills provide specialized instructions for specific tasks.
Use the read tool to load a skill's file when the task matches its description.
When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.";
    let list = "\
<available_skills>
  <skill>
    <name>pdf</name>
    <description>Read &lt;PDF&gt; &amp; &quot;extract&quot; tables</description>
    <location>/ws/skills/pdf/SKILL.md</location>
  </skill>
  <skill>
    <name>o&apos;brien</name>
    <description>Irish things</description>
    <location>/ws/skills/o&apos;brien/SKILL.md</location>
  </skill>
</available_skills>";
    assert_eq!(
        format_skills_for_prompt(&skills, "read"),
        format!("{intro}\n\n{list}")
    );
    assert_eq!(format_skills_for_prompt(&skills[1..2], "read"), "");
    assert_eq!(format_skills_for_prompt(&[], "read"), "");
}

mod malformed_input {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Whatever a SKILL.md holds, parsing gives a skill or a problem, never a panic.
        #[test]
        fn parse_skill_never_panics(body in "\\PC{0,200}") {
            let _ = parse_skill(&body);
            let _ = parse_skill(&format!("---\n{body}\n---\n"));
        }

        /// Frontmatter built from YAML-ish pieces (quotes, escapes, indents, block markers,
        /// multi-byte whitespace) exercises every branch of the subset parser.
        #[test]
        fn yamlish_frontmatter_never_panics(
            lines in proptest::collection::vec(
                "(name|description|metadata|x-y|  |\t|\u{3000}| - )?(: ?)?(\"|'|\\||>|-|\\+|#|\\\\u|\\\\|é|\u{3000}|[a-z ]{0,6}){0,6}",
                0..12,
            )
        ) {
            let _ = parse_skill(&format!("---\n{}\n---\n", lines.join("\n")));
        }
    }
}
