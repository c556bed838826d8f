//! The command-line check for `ExecSecurity::Allowlist`. A strict tokenizer ([`lexer`])
//! splits the line into simple commands at `;`, `&`, `&&`, `|`, `||`, `|&` and newlines,
//! and every command's program must be on the allowlist.
//!
//! The tokenizer accepts only a subset of the shell language whose meaning is the same in
//! `dash` and `bash` (either may be `sh`), and refuses everything else rather than
//! guessing: the check is sound only if it reads a line exactly as the shell will (in an
//! ASCII-compatible, self-synchronising character set such as UTF-8, which is why the
//! model may not set `LC_ALL`, `LC_CTYPE` or `LANG`).
//! Accepted: plain words, single and double quotes, backslash escapes, `\` + newline
//! between words, comments at the start of a word, `$NAME`, `$1`, `$@`-style specials,
//! `${NAME}`, `${#NAME}` and `${NAME<op>word}` with `op` one of `- = + ? :- := :+ :? # ## % %%`
//! and a word of letters, digits and `_ . / , : = + - @ % ^ * ? ~ #` (nothing that can
//! end, nest, quote or expand), fd duplication, and redirections to or from `/dev/null`.
//!
//! Refused outright: command substitution (`$(...)`, backticks, also inside double quotes),
//! arithmetic (`$((...))`, `$[...]`), `$'...'` and `$"..."`, any other `${...}` form (bash's
//! substrings, `@P`, indirection and subscripts evaluate code), process substitution,
//! subshells and grouping with parentheses (and so function definitions and `case`),
//! here-documents, `;;`, `;&`, `\` + newline inside a word, redirections to or from
//! anything but `/dev/null`, a program name that uses expansion, globbing or braces (`$X`,
//! `*`, `~`, `{a,b}`), assignments to variables that change which program runs (`PATH=`,
//! `LD_PRELOAD=`, also through `${PATH:=...}`), and anything unparseable.
//!
//! Matching is exact on the program word after quote removal: `ls` allows `ls` found
//! through `PATH` only; `./ls` or `/bin/ls` need their own entries. Allowing a program
//! allows all of its arguments, with two exceptions for bash builtins that would evaluate
//! an argument as code (an array subscript such as `'a[$(id)]'` is expanded): `printf`
//! may not take options (`-v`; `--` is fine) and its format must be written literally, and
//! `test` may not take `-v` or any argument that uses expansion. Programs that run other
//! programs or evaluate code (`sh`, `bash`, `eval`, `exec`, `env`, `xargs`, `sudo`,
//! `nohup`, `time`, `command`, `find -exec`, and under bash the builtins `read`,
//! `declare`, `export`, `local`, `let`, `unset`, `mapfile`, ...) are not special-cased:
//! allowing one of them effectively allows everything. Shell keywords (`if`, `for`,
//! `while`, `{`, `!`, `[[`) count as programs, so compound commands are refused unless
//! those words are listed.

pub mod lexer;

pub use lexer::{Word, parse};

use super::env::is_guarded;

/// Why a command line is refused in allowlist mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowlistError {
    #[error("`{program}` is not in the exec allowlist")]
    NotAllowed { program: String },
    #[error("command substitution ({0}) is not allowed in allowlist mode")]
    Substitution(&'static str),
    #[error("process substitution ({0}) is not allowed in allowlist mode")]
    ProcessSubstitution(&'static str),
    #[error("subshells and grouping with `(` `)` are not allowed in allowlist mode")]
    Subshell,
    #[error("here-documents (`<<`) are not allowed in allowlist mode")]
    HereDocument,
    #[error(
        "redirection `{op}` to or from {target:?} is not allowed in allowlist mode (only /dev/null)"
    )]
    Redirection { op: String, target: String },
    #[error("redirection `{0}` has no target")]
    MissingTarget(String),
    #[error("the program name `{0}` uses expansion, globbing or braces; write it literally")]
    DynamicProgram(String),
    #[error("assigning {0} is not allowed in allowlist mode")]
    GuardedAssignment(String),
    #[error("`{0}` is not supported in allowlist mode")]
    Unsupported(String),
    #[error("unterminated {0} in the command line")]
    Unterminated(&'static str),
    #[error(
        "`{program}` with the argument {argument:?} can run code; not allowed in allowlist mode"
    )]
    EvaluatingArgument { program: String, argument: String },
}

/// Check `line` against `allowed`; `Ok` lists the programs it runs.
pub fn check(line: &str, allowed: &[String]) -> Result<Vec<String>, AllowlistError> {
    let mut programs = Vec::new();
    for command in parse(line)? {
        let mut words = command.into_iter();
        let program = loop {
            match words.next() {
                Some(Word {
                    assigns: Some(name),
                    ..
                }) => {
                    if is_guarded(&name) {
                        return Err(AllowlistError::GuardedAssignment(name));
                    }
                }
                other => break other,
            }
        };
        let Some(program) = program else { continue };
        if program.dynamic {
            return Err(AllowlistError::DynamicProgram(program.text));
        }
        if !allowed.contains(&program.text) {
            return Err(AllowlistError::NotAllowed {
                program: program.text,
            });
        }
        check_builtin_arguments(&program.text, &words.collect::<Vec<_>>())?;
        programs.push(program.text);
    }
    Ok(programs)
}

/// bash's `printf -v NAME` and `test -v NAME` expand an array subscript in NAME, so
/// `printf -v 'a[$(id)]' x` runs `id`: refuse the arguments that could get there.
fn check_builtin_arguments(program: &str, args: &[Word]) -> Result<(), AllowlistError> {
    let refuse = |word: &Word| {
        Err(AllowlistError::EvaluatingArgument {
            program: program.to_owned(),
            argument: word.text.clone(),
        })
    };
    match program {
        "printf" => match args.first() {
            Some(first) if first.dynamic || (first.text.starts_with('-') && first.text != "--") => {
                refuse(first)
            }
            _ => Ok(()),
        },
        "test" | "[" => match args.iter().find(|w| w.dynamic || w.text == "-v") {
            Some(word) => refuse(word),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}
