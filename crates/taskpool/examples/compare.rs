//! Rough timings of the kernels on taskpool (both free lists) and rayon.
//!
//! `cargo run --release -p taskpool --example compare [fft_max_size] [matmul_order]`
//! Best of 5 runs each. A quick look only: the `pool` probe of corescope is
//! the measurement (budgets, warnings, run file).

use std::time::{Duration, Instant};

use taskpool::fft::{fft, test_signal, Complex};
use taskpool::matmul::{rmatmul, Matrix};
use taskpool::{Executor, FreeList, Pool, PoolConfig};

const REPEATS: usize = 5;

fn best_of(mut run: impl FnMut()) -> Duration {
    run(); // warm-up: threads started, caches filled
    (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:9.3}", d.as_secs_f64() * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let fft_max: u32 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(12);
    let order: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(512);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pools = [
        Pool::new(PoolConfig::new(FreeList::Mutex))?,
        Pool::new(PoolConfig::new(FreeList::LockFree))?,
    ];

    println!("FFT (ms, best of {REPEATS}); taskpool block 0 = a worker per butterfly, block {cpus} = CPUs");
    println!("size   sequential  mutex/b0 lockfree/b0  mutex/b{cpus} lockfree/b{cpus}     rayon  cas_fail(lockfree/b0)");
    for s in 1..=fft_max {
        let input = test_signal(1 << s);
        let mut output = vec![Complex::default(); 1 << s];
        let mut time = |exec: Executor<'_>| best_of(|| fft(exec, &input, &mut output).unwrap());
        let seq = time(Executor::Sequential);
        let mut cells = Vec::new();
        for block in [0, cpus] {
            for pool in &pools {
                cells.push(time(Executor::TaskPool { pool, block }));
            }
        }
        pools[1].reset_stats();
        time(Executor::TaskPool {
            pool: &pools[1],
            block: 0,
        });
        let cas = pools[1].stats().cas_failures;
        let rayon = time(Executor::Rayon);
        println!(
            "{s:4} {} {} {} {} {} {} {cas:10}",
            ms(seq),
            ms(cells[0]),
            ms(cells[1]),
            ms(cells[2]),
            ms(cells[3]),
            ms(rayon)
        );
    }

    println!("\nrecursive matmul n={order} (ms, best of {REPEATS})");
    println!("k   sequential     mutex  lockfree     rayon   mutex/rayon");
    let (a, b) = (Matrix::test_matrix(order, 1), Matrix::test_matrix(order, 2));
    let mut c = Matrix::zeros(order);
    for k in 0..=4 {
        let mut time = |exec: Executor<'_>| best_of(|| rmatmul(exec, &a, &b, &mut c, k).unwrap());
        let seq = time(Executor::Sequential);
        let mutex = time(Executor::taskpool(&pools[0]));
        let lockfree = time(Executor::taskpool(&pools[1]));
        let rayon = time(Executor::Rayon);
        println!(
            "{k} {} {} {} {} {:9.2}",
            ms(seq),
            ms(mutex),
            ms(lockfree),
            ms(rayon),
            mutex.as_secs_f64() / rayon.as_secs_f64()
        );
    }
    for pool in &pools {
        println!("{}: {:?}", pool.free_list(), pool.stats());
    }
    Ok(())
}
