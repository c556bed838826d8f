//! Keyword search over the trigram FTS5 index, and the token sets MMR compares.
//!
//! The trigram tokenizer indexes every 3-character window, so a query term matches as a
//! substring (good for Chinese, which has no spaces) but a term of fewer than 3
//! characters matches nothing through `MATCH`. The query is therefore split into terms:
//! runs of CJK characters and runs of other letters/digits. Terms of 3+ characters go to
//! FTS5, OR-ed (BM25 ranks chunks matching more of them higher); a CJK run longer than 3
//! is given as its overlapping 3-character windows, so `长期记忆系统` finds text that
//! contains `记忆系统` without the whole run. Only when *no* term has 3 characters (a
//! 2-character Chinese word like `记忆`, or `AI`) is a `LIKE` scan of the chunk text used
//! instead, scored by occurrences; that scan reads every chunk, which is fine at personal
//! scale and only happens for such short queries.
//!
//! BM25 is turned into 0..1 as `r / (1 + r)` with `r = -bm25` (FTS5's bm25 is negative,
//! more negative is better). OpenClaw computes `1 / (1 + max(0, rank))`, which gives 1
//! for every match since FTS5 ranks are never positive; we keep its shape but use the
//! relevance, so better matches score higher.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use crate::chunk::is_cjk;

/// Words too common to be worth a keyword lookup when the query has others.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "was", "were", "with", "that", "this", "from", "have", "has",
    "had", "what", "when", "where", "which", "who", "how", "why", "you", "your", "our", "but",
    "not", "can", "did", "does", "about", "into", "then", "than", "there", "their", "they",
];

/// At most this many FTS terms (long Chinese sentences give many windows).
const MAX_TERMS: usize = 32;

/// Rows a short-term `LIKE` scan considers, at most.
const LIKE_LIMIT: i64 = 5000;

/// Splits a query into words: runs of CJK characters and runs of other alphanumerics.
fn words(query: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut current = String::new();
    let mut current_cjk = false;
    for c in query.chars() {
        let cjk = is_cjk(c) && c.is_alphanumeric();
        let word = cjk || c.is_alphanumeric() || c == '_';
        if (!word || cjk != current_cjk) && !current.is_empty() {
            out.push((std::mem::take(&mut current), current_cjk));
        }
        if word {
            current.push(c);
            current_cjk = cjk;
        }
    }
    if !current.is_empty() {
        out.push((current, current_cjk));
    }
    out
}

/// The FTS terms (3+ characters) and the short terms of a query.
pub(crate) fn terms(query: &str) -> (Vec<String>, Vec<String>) {
    let mut long = Vec::new();
    let mut short = Vec::new();
    for (word, cjk) in words(query) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() < 3 {
            short.push(word);
        } else if cjk && chars.len() > 3 {
            long.extend(chars.windows(3).map(|w| w.iter().collect::<String>()));
        } else {
            long.push(word);
        }
    }
    let mut seen = HashSet::new();
    long.retain(|t| seen.insert(t.to_lowercase()));
    let content: Vec<String> = long
        .iter()
        .filter(|t| !STOPWORDS.contains(&t.to_lowercase().as_str()))
        .cloned()
        .collect();
    if !content.is_empty() {
        long = content;
    }
    long.truncate(MAX_TERMS);
    short.dedup();
    (long, short)
}

/// An FTS5 query OR-ing the terms as quoted strings (quotes doubled: no syntax leaks).
fn match_expr(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The best `limit` chunks for the query's keywords, with scores in 0..1.
pub(crate) fn text_candidates(
    conn: &Connection,
    query: &str,
    limit: usize,
) -> Result<Vec<(i64, f32)>, rusqlite::Error> {
    let (long, short) = terms(query);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    if !long.is_empty() {
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ?1
             ORDER BY bm25(chunks_fts) LIMIT ?2",
        )?;
        let rows = stmt.query_map(rusqlite::params![match_expr(&long), limit], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, bm25) = row?;
            let relevance = (-bm25).max(0.0);
            out.push((id, (relevance / (1.0 + relevance)) as f32));
        }
        return Ok(out);
    }
    if short.is_empty() {
        return Ok(Vec::new());
    }
    // Short terms: substring scan, scored by the share of terms present and how often.
    let mut counts: HashMap<i64, (usize, usize)> = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, heading || char(10) || text FROM chunks
         WHERE text LIKE ?1 ESCAPE '\\' OR heading LIKE ?1 ESCAPE '\\' LIMIT ?2",
    )?;
    for term in &short {
        let pattern = format!("%{}%", escape_like(term));
        let needle = term.to_lowercase();
        let rows = stmt.query_map(rusqlite::params![pattern, LIKE_LIMIT], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        for row in rows {
            let (id, text) = row?;
            let occurrences = text.to_lowercase().matches(&needle).count().max(1);
            let entry = counts.entry(id).or_default();
            entry.0 += 1;
            entry.1 += occurrences;
        }
    }
    let n = short.len() as f32;
    let mut out: Vec<(i64, f32)> = counts
        .into_iter()
        .map(|(id, (terms, occ))| {
            let occ = occ as f32;
            (id, terms as f32 / n * (occ / (occ + 1.0)))
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(out)
}

/// Escapes `%`, `_` and the escape character for `LIKE ... ESCAPE '\'`.
fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Lowercased words plus CJK character bigrams, sorted and deduplicated (for Jaccard).
pub(crate) fn similarity_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for (word, cjk) in words(text) {
        if cjk {
            let chars: Vec<char> = word.chars().collect();
            if chars.len() == 1 {
                tokens.push(word);
            } else {
                tokens.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
            }
        } else {
            tokens.push(word.to_lowercase());
        }
    }
    tokens.sort_unstable();
    tokens.dedup();
    tokens
}

/// Jaccard similarity of two sorted, deduplicated token lists.
pub(crate) fn jaccard(a: &[String], b: &[String]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    both as f32 / (a.len() + b.len() - both) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_cjk_and_short_words() {
        let (long, short) = terms("the Pincer AI 记忆");
        assert_eq!(long, vec!["Pincer"]);
        assert_eq!(short, vec!["AI", "记忆"]);
        let (long, _) = terms("长期记忆系统");
        assert_eq!(long, vec!["长期记", "期记忆", "记忆系", "忆系统"]);
        let (long, _) = terms("the");
        assert_eq!(long, vec!["the"]);
        let (long, _) = terms("say \"hi\" OR NEAR(x)");
        assert_eq!(match_expr(&long), "\"say\" OR \"NEAR\"");
    }

    #[test]
    fn jaccard_of_sets() {
        let a = similarity_tokens("rust memory index");
        let b = similarity_tokens("Rust memory search");
        assert!((jaccard(&a, &b) - 0.5).abs() < 1e-6);
        assert_eq!(jaccard(&a, &a), 1.0);
    }
}
