//! The terms and shorthand the report prints, each with its meaning: one table
//! that the HTML report embeds (a collapsed `<details id='glossary'>`) and that
//! `docs/glossary.md` is written from (a test checks the file matches it).

use super::svg::esc;
use std::fmt::Write;

/// (term, meaning), in the order a reader meets them: placements, figures and
/// their intervals, the machine's state, then the probes' own words. Plain text:
/// no Markdown or HTML, so both forms print it as it is.
pub const TERMS: &[(&str, &str)] = &[
    (
        "linear",
        "Placement: thread i runs on the i-th allowed CPU in the operating system's \
         numbering (the seed paper's \"dumb\" placement).",
    ),
    (
        "compact",
        "Placement: fill every hardware thread of a core, then the next core, NUMA node by \
         NUMA node, so that threads share as much as they can (cores, caches).",
    ),
    (
        "scatter",
        "Placement: each new thread as far from the others as the machine allows (a new NUMA \
         node, package, shared cache or core first), so that threads share as little as they \
         can (the seed paper's round robin).",
    ),
    (
        "unbound",
        "Placement: no pinning; the operating system places the threads and may move them \
         (the seed paper's \"auto\").",
    ),
    (
        "same-cpu, same-core, other-core, other-package",
        "Where the two threads of a pair run: one CPU, time-sliced; the two hardware threads \
         of one core (SMT); two cores of one package; two packages.",
    ),
    (
        "measured once (linear = compact = scatter here)",
        "Variants that ran on the very same CPUs here (on a small machine several placements \
         pick the same CPUs) are measured once and share the figure; they are never compared \
         with each other.",
    ),
    (
        "×N (1.98×)",
        "A ratio: 1.98× is 1.98 times the figure it is set against (2 threads at 1.98× the \
         rate of 1 thread). After a count it says how many times (state changed 30×, moved \
         ≤ 36×); between a count and a size it multiplies (2 × 1500000 B: two buffers of \
         1500000 bytes).",
    ),
    (
        "× one thread (scalability)",
        "A rate with N threads divided by the rate of one thread in the same round: N× one \
         thread is perfect scaling.",
    ),
    (
        "peak",
        "The highest rate of a series over its thread counts, with its interval, and the \
         threads that reached it.",
    ),
    (
        "95 % of it already at N",
        "The fewest threads whose rate reaches 95 % of the peak: more threads add little.",
    ),
    (
        "per CPU, per core",
        "A rate divided by the CPUs the run could use (or by the cores), so that machines of \
         different sizes compare: totals grow with the machine, per-CPU figures need not.",
    ),
    (
        "95 % CI of the median",
        "The 95 % confidence interval of the median: the range that holds the true median of \
         the repeated measurement with 95 % confidence, from the repetitions of both epochs. \
         It says how sure the figure is, not how much single samples vary.",
    ),
    (
        "±x%",
        "Half the width of the 95 % confidence interval of the median, as a share of the \
         value; shown where it is over 1 %.",
    ),
    (
        "(n=1)",
        "Measured once: no repetitions, so no interval; a rough figure.",
    ),
    (
        "p50, p99",
        "Percentiles of a distribution of samples: p50 is the median (half the samples are \
         below it), p99 the value that 99 % of the samples stay under.",
    ),
    (
        "cycles, kcycles",
        "A time counted in clock cycles of the core (kcycles: thousands of cycles), from the \
         run's measured core clock, else its nominal clock, else its timer's.",
    ),
    (
        "per cycle",
        "A rate divided by the core clock: the work of one clock cycle, which compares \
         machines whose clocks differ.",
    ),
    (
        "Gops/s, GFLOP/s",
        "Billions of integer operations, or of floating-point operations, per second.",
    ),
    (
        "FLOP per cycle",
        "Floating-point operations one thread completes per clock cycle (a fused \
         multiply-add counts as two): the peak probe's figure to hold against the core's \
         FMA limit.",
    ),
    (
        "FMA limit",
        "The most FLOP per cycle a core can do: its fused multiply-add units × the vector \
         lanes × 2. A measured FLOP per cycle is held against it.",
    ),
    (
        "normal, transposed (matmul)",
        "The two layouts of the naive matrix multiply's result: normal stores C row by row as \
         computed; transposed stores C[j][i], which turns every loop order's walk through C \
         around.",
    ),
    (
        "ijk … kji (matmul)",
        "The six orders of the naive matrix multiply's three loops; the order decides which \
         matrix is walked along its rows (fast) and which down its columns (slow).",
    ),
    (
        "library (matmul)",
        "The blocked multiply of the matrixmultiply crate: the figure the naive loop orders \
         are held against.",
    ),
    (
        "working set",
        "The bytes a memory test touches over and over. Its size decides which cache level \
         (or the memory) serves the loads: a working set under half a level is served by it.",
    ),
    (
        "epoch",
        "One of the runner's two passes over the suite: every repeated measurement is made in \
         both, minutes apart, so that a change of the machine shows inside the run.",
    ),
    (
        "state-dependent point",
        "A point whose two epochs disagree (their intervals are disjoint and their medians \
         over 3 % apart): the machine was in two states during the run, and the point \
         belongs to a state, not to the machine. The run file keeps both.",
    ),
    (
        "round trip (CPU round trip)",
        "The time a cache line takes to go from one CPU to another and back, measured between \
         the first two CPUs around every measurement. When it moves by more than 1.5× the \
         machine changed state (on a VM: its vCPUs moved between host cores), and the \
         measurement is made again or kept with a warning.",
    ),
    (
        "steal",
        "The share of time the hypervisor gave this virtual machine's CPUs to other guests: \
         figures measured under steal may be low.",
    ),
    (
        "other programs",
        "CPU time that programs other than corescope used during a measurement, as a share \
         of the machine's.",
    ),
    (
        "drift",
        "A change of the machine's speed over the run, seen by timing the same reference \
         kernel before and after each probe.",
    ),
    (
        "pinned threads moved",
        "A pinned worker ran on more than one CPU (its cpu-migrations counter rose), so its \
         figure mixes CPUs.",
    ),
    (
        "told apart, not told apart",
        "Told apart: the 95 % interval of a ratio lies wholly on one side of 1, so the two \
         sides differ. Not told apart: the interval holds 1, so no difference is shown, \
         which is not the same as the two being equal.",
    ),
    (
        "equivalent, indistinguishable (within ±3 %)",
        "The whole 95 % interval of a ratio lies within 1 ± 3 %: the two sides are the same \
         here for any practical purpose.",
    ),
    (
        "beyond the noise",
        "In compare: a series point whose two runs' 95 % intervals do not overlap, or a \
         verdict or status that differs between the runs.",
    ),
    (
        "≈",
        "In compare: the two runs' 95 % intervals overlap at this point, so the runs are not \
         told apart there.",
    ),
    (
        "better, worse",
        "In compare: for times lower is better (shorter, faster), for rates higher is better \
         (more work per second or per cycle); other units have no better side.",
    ),
    (
        "uncontended",
        "One thread alone takes and releases the lock, with no other thread wanting it: the \
         lock's cheapest path.",
    ),
    (
        "hand-over, hand-off",
        "Passing something from one thread to another: a cache line taken by \
         compare-and-swap (c2c, loaded-coherence), a lock passed to a waiting thread (mutex), \
         events passed through a channel. Its time runs from the first thread's act to the \
         second thread seeing it.",
    ),
    (
        "CAS (compare-and-swap)",
        "An atomic instruction that writes a new value only if the old one is still there; \
         it pulls the cache line to the CPU that runs it.",
    ),
    (
        "spinner",
        "A thread that waits by looping on a lock word instead of sleeping; the spin probe \
         measures what such a thread costs the threads around it.",
    ),
    (
        "sleeping, spinning waiter",
        "A waiter the kernel puts to sleep and wakes again (microseconds), or one that loops \
         on its CPU until the lock is free (nanoseconds, but it keeps the CPU busy).",
    ),
    (
        "packed, padded (false-sharing)",
        "Two threads' counters in one cache line (packed) or each on a line of its own \
         (padded): packed against padded is the cost of false sharing.",
    ),
    (
        "batch",
        "Events a channel pushes or pops in one call (batches of 256): larger batches spread \
         the cost of each hand-over over more events.",
    ),
    (
        "ring",
        "A ring buffer: one fixed array that a producer and a consumer go round and round. In \
         hspc's ring mode every push is visible at once, as in rtrb.",
    ),
    (
        "n-buffer",
        "hspc's mode that hands events over a whole buffer at a time (for example 4 buffers \
         of 8 KiB).",
    ),
    (
        "pad",
        "Bytes of padding after each channel buffer, so that two threads' data do not share a \
         cache line (pad 128 B: two 64-byte lines).",
    ),
    (
        "spin then park",
        "A wait that spins for a while, then sleeps (parks) until it is woken: one of the \
         wait strategies channel-tune chooses from.",
    ),
    (
        "pick (channel-tune)",
        "The tuner's choice: buffer count × buffer size, padding and wait strategy, with the \
         time per event it gives.",
    ),
];

/// The glossary as a collapsed HTML block (`<details id='glossary'>`), for the
/// end of the report page.
pub fn html() -> String {
    let mut o = String::from("<details id='glossary'><summary>glossary</summary><dl>");
    for (term, meaning) in TERMS {
        let _ = write!(o, "<dt>{}</dt><dd>{}</dd>", esc(term), esc(meaning));
    }
    o.push_str("</dl></details>");
    o
}

/// The text of `docs/glossary.md`.
pub fn markdown() -> String {
    let mut o = String::from(
        "# Glossary\n\n\
         The terms and shorthand the report prints: the terminal summary and tables, the HTML \
         page (which embeds this list, collapsed, at its end) and `corescope compare`. \
         Written from the table in `crates/corescope/src/render/glossary.rs`; a test \
         (`tests/words.rs`) checks that this file matches it. To change a meaning, edit the \
         table and run `UPDATE_GLOSSARY=1 cargo test -p corescope --test words`.\n\n",
    );
    for (term, meaning) in TERMS {
        let _ = writeln!(o, "- **{}**: {}", md_escape(term), md_escape(meaning));
    }
    o
}

/// Escapes the characters Markdown would read as markup.
fn md_escape(s: &str) -> String {
    s.chars().fold(String::new(), |mut o, c| {
        if matches!(c, '*' | '_' | '`' | '[' | ']' | '<' | '>' | '|' | '\\') {
            o.push('\\');
        }
        o.push(c);
        o
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_term_is_plain_unique_and_ends_its_sentence() {
        let mut seen = std::collections::HashSet::new();
        for (term, meaning) in TERMS {
            assert!(seen.insert(*term), "{term} twice");
            assert!(meaning.ends_with('.'), "{term}: {meaning}");
            assert!(!meaning.contains("  "), "{term}: {meaning}");
        }
        let page = html();
        assert!(page.starts_with("<details id='glossary'>"));
        assert_eq!(page.matches("<dt>").count(), TERMS.len());
        assert!(markdown().contains("- **linear**: Placement"));
    }
}
