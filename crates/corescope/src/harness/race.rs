//! Racing variants against each other: rounds in which every variant still in the
//! race runs once, in an order rotated by one each round (drift and cache state
//! hit each alike, and no variant always runs first or after the same one), until
//! the caller's judge ends the race, a round may not start (the budget), or the
//! most rounds ran. The tuner settles its steps' choices with [`race`]; the
//! runner's comparison groups and [`super::pair::rotation`] take the same
//! [`rotated`] order.

/// Round `round`'s order over `n` variants (places, from 0): `round % n`, the
/// next, … wrapping around.
pub fn rotated(n: usize, round: usize) -> impl Iterator<Item = usize> {
    let k = round % n.max(1);
    (0..n).map(move |j| (j + k) % n)
}

/// Race the variants of `live` (ids the caller knows them by) in rounds of
/// [`rotated`] order over what is still live, at most `most_rounds`. Before each
/// round `may_start(state, rounds so far)` says whether it may; `run(state, id)`
/// runs one variant once; after each round `judge(state, live, rounds so far)`
/// drops what is out of the race from `live` and says whether the race is over.
/// A race ends too when one variant is left. Returns the rounds run.
pub fn race<S, E>(
    state: &mut S,
    live: &mut Vec<usize>,
    most_rounds: usize,
    may_start: impl Fn(&S, usize) -> bool,
    mut run: impl FnMut(&mut S, usize) -> Result<(), E>,
    mut judge: impl FnMut(&mut S, &mut Vec<usize>, usize) -> bool,
) -> Result<usize, E> {
    let mut rounds = 0;
    while rounds < most_rounds && live.len() > 1 && may_start(state, rounds) {
        for k in rotated(live.len(), rounds) {
            run(state, live[k])?;
        }
        rounds += 1;
        if judge(state, live, rounds) {
            break;
        }
    }
    Ok(rounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_rotate_over_what_is_live_until_the_judge_ends_them() {
        assert_eq!(rotated(3, 4).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(rotated(0, 2).count(), 0);
        let mut ran = Vec::new();
        let mut live = vec![10, 20, 30];
        let rounds = race(
            &mut ran,
            &mut live,
            9,
            |_, _| true,
            |ran: &mut Vec<usize>, id| {
                ran.push(id);
                Ok::<(), ()>(())
            },
            |_, live, rounds| {
                // 30 is out after the first round; the race ends after the third.
                live.retain(|&id| id != 30);
                rounds == 3
            },
        );
        assert_eq!(rounds, Ok(3));
        assert_eq!(ran, [10, 20, 30, 20, 10, 10, 20]);
    }

    #[test]
    fn a_round_that_may_not_start_or_a_failing_run_ends_the_race() {
        let mut live = vec![1, 2];
        let rounds = race(
            &mut (),
            &mut live,
            9,
            |_, r| r < 2,
            |_, _| Ok::<(), ()>(()),
            |_, _, _| false,
        );
        assert_eq!(rounds, Ok(2));
        let failed = race(
            &mut (),
            &mut live,
            9,
            |_, _| true,
            |_, id| if id == 2 { Err(id) } else { Ok(()) },
            |_, _, _| false,
        );
        assert_eq!(failed, Err(2));
    }
}
