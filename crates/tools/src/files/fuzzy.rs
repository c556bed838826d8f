//! Text matching for `edit`: exact search, pi's fuzzy fallback (`fuzzyFindText`: trailing
//! whitespace per line ignored, smart quotes, unicode dashes and special spaces folded to
//! ASCII) mapped back to byte ranges of the original text, and a "closest line" hint for
//! text that matches nowhere.

use std::ops::Range;

/// Where a needle was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// Exactly one place, as a byte range of the haystack.
    Unique {
        range: Range<usize>,
        fuzzy: bool,
    },
    /// Several places (count).
    Ambiguous {
        count: usize,
        fuzzy: bool,
    },
    Absent,
}

/// Find `needle` in `haystack`: exactly first, then fuzzily if there is no exact match.
pub(crate) fn find(haystack: &str, needle: &str) -> Found {
    let exact: Vec<usize> = haystack.match_indices(needle).map(|(i, _)| i).collect();
    match exact.as_slice() {
        [start] => {
            return Found::Unique {
                range: *start..*start + needle.len(),
                fuzzy: false,
            };
        }
        [] => {}
        many => {
            return Found::Ambiguous {
                count: many.len(),
                fuzzy: false,
            };
        }
    }
    let folded_needle = normalize(needle).text;
    if folded_needle.is_empty() {
        return Found::Absent;
    }
    let folded = normalize(haystack);
    let hits: Vec<usize> = folded
        .text
        .match_indices(folded_needle.as_str())
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [] => Found::Absent,
        [start] => {
            let end = start + folded_needle.len();
            Found::Unique {
                range: folded.starts[*start]..folded.ends[end - 1],
                fuzzy: true,
            }
        }
        many => Found::Ambiguous {
            count: many.len(),
            fuzzy: true,
        },
    }
}

/// Normalised text with, for each of its bytes, the original byte range of the character
/// it came from.
struct Folded {
    text: String,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

fn normalize(original: &str) -> Folded {
    let mut folded = Folded {
        text: String::with_capacity(original.len()),
        starts: Vec::with_capacity(original.len()),
        ends: Vec::with_capacity(original.len()),
    };
    let mut line_start = 0;
    for (i, line) in original.split('\n').enumerate() {
        if i > 0 {
            // The `\n` ending the previous line.
            push(&mut folded, '\n', line_start - 1, line_start);
        }
        let kept = line.trim_end();
        for (offset, c) in kept.char_indices() {
            let at = line_start + offset;
            push(&mut folded, fold_char(c), at, at + c.len_utf8());
        }
        line_start += line.len() + 1;
    }
    folded
}

fn push(folded: &mut Folded, c: char, start: usize, end: usize) {
    folded.text.push(c);
    for _ in 0..c.len_utf8() {
        folded.starts.push(start);
        folded.ends.push(end);
    }
}

fn fold_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// The 1-based number and text of the line most like the needle's first non-blank line,
/// when one is reasonably close (a similarity ratio of at least 0.6).
pub(crate) fn closest_line(haystack: &str, needle: &str) -> Option<(usize, String)> {
    let wanted = needle.lines().find(|l| !l.trim().is_empty())?.trim();
    let mut best: Option<(f32, usize, &str)> = None;
    for (index, line) in haystack.lines().enumerate().take(20_000) {
        let candidate = line.trim();
        if candidate.is_empty() || candidate.len() > 4 * wanted.len() + 40 {
            continue;
        }
        let ratio = similar::TextDiff::from_chars(wanted, candidate).ratio();
        if best.is_none_or(|(r, _, _)| ratio > r) {
            best = Some((ratio, index + 1, line));
        }
    }
    best.filter(|(ratio, _, _)| *ratio >= 0.6)
        .map(|(_, number, line)| (number, line.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_matches_map_back_to_the_original() {
        let text = "let s = \u{201C}hi\u{201D};   \nnext\n";
        let Found::Unique { range, fuzzy } = find(text, "let s = \"hi\";\nnext") else {
            panic!("expected a match");
        };
        assert!(fuzzy);
        assert_eq!(&text[range], "let s = \u{201C}hi\u{201D};   \nnext");
        assert_eq!(
            find("a b\na b\n", "a b"),
            Found::Ambiguous {
                count: 2,
                fuzzy: false
            }
        );
        assert_eq!(find("abc", "xyz"), Found::Absent);
        assert_eq!(
            closest_line("fn main() {\n    println!(\"hi\");\n}", "println!(\"ho\");"),
            Some((2, "    println!(\"hi\");".to_owned()))
        );
    }
}
