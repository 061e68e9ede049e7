//! The native CLI over the same core the browser runs.
//!
//! `failover-lab run FILE [--format json|describe|trace]` runs a scenario to its
//! end and prints the run report, the `kafka-topics.sh --describe` table or the
//! narrated trace. A scenario that fails to parse or validate exits with status 2
//! and one message on stderr.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::process::ExitCode;

    use clap::{Parser, Subcommand, ValueEnum};
    use failover_lab::Lab;

    #[derive(Parser)]
    #[command(
        name = "failover-lab",
        version,
        about = "Deterministic Kafka replication and failover simulator"
    )]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Run a scenario file to its end and print the result.
        Run {
            /// Scenario JSON file ("-" for stdin); omit with --sweep-seed.
            #[arg(required_unless_present = "sweep_seed")]
            file: Option<String>,
            /// Replay run SEED of a sweep instead of a file.
            #[arg(long)]
            sweep_seed: Option<u64>,
            /// The sweep configuration of --sweep-seed, as the sweep prints it
            /// (e.g. "acks=all,rf=3,min.isr=2,unclean=false").
            #[arg(long, default_value = "acks=all,rf=3,min.isr=2,unclean=false")]
            sweep_config: String,
            /// Print the scenario instead of running it (to open it in the browser).
            #[arg(long)]
            emit_scenario: bool,
            #[arg(long, value_enum, default_value_t = Format::Json)]
            format: Format,
            /// Override the scenario's seed.
            #[arg(long)]
            seed: Option<u64>,
            /// Override the scenario's run_until_ms.
            #[arg(long)]
            until: Option<u64>,
            /// Apply a setting before running (repeatable), the keys of
            /// `sweep --set`: acks, rf, min.insync.replicas,
            /// unclean.leader.election.enable, any config or sim. key.
            #[arg(long = "set", value_name = "KEY=VALUE")]
            set: Vec<String>,
        },
        /// Check scenario files: each loads, and every claim of its tour
        /// (`tour[K].claims`) holds when the run reaches its stop.
        Check {
            #[arg(required = true)]
            files: Vec<String>,
            /// Print every claim with what it evaluated to.
            #[arg(long)]
            verbose: bool,
        },
        /// Run N seeds of random fault schedules over a matrix of configurations.
        Sweep {
            #[arg(long, default_value_t = 100)]
            seeds: u64,
            #[arg(long, default_value_t = 1)]
            first_seed: u64,
            /// Fix a setting for every configuration (acks, rf, min.insync.replicas,
            /// unclean.leader.election.enable, or any config key such as sim.truncation).
            #[arg(long = "set", value_name = "KEY=VALUE")]
            set: Vec<String>,
            #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
            format: SweepFormat,
            /// Worker threads (default: all cores).
            #[arg(long)]
            threads: Option<usize>,
        },
        /// Turn a cluster's `kafka-topics.sh --describe` output (and optionally
        /// `kafka-configs.sh --describe --entity-type brokers|topics` output
        /// and a broker.rack list, "ID RACK" a line) into a scenario with its
        /// brokers, racks, topics, replicas, leaders, ISR and ELR at t = 0.
        Import {
            /// Files holding the tools' output, read one after another ("-" for stdin).
            #[arg(required = true)]
            files: Vec<String>,
            /// Records a second of one producer per topic (0: no producers).
            #[arg(long, default_value_t = 0)]
            records_per_sec: u64,
            /// The producers' acks.
            #[arg(long, default_value = "all", value_parser = ["0", "1", "all"])]
            acks: String,
            /// One consumer per topic, reading all its partitions.
            #[arg(long)]
            consumers: bool,
            /// The scenario's name.
            #[arg(long)]
            name: Option<String>,
            /// The scenario's seed.
            #[arg(long, default_value_t = 1)]
            seed: u64,
            /// The scenario's run_until_ms.
            #[arg(long, default_value_t = 60_000)]
            until: u64,
            /// Write the scenario to FILE instead of stdout.
            #[arg(long, short, value_name = "FILE")]
            output: Option<String>,
        },
        /// Merge sweep shards (`sweep --format jsonl` outputs over disjoint
        /// seeds) into the rows one sweep over all their seeds gives.
        SweepMerge {
            /// Shard files.
            #[arg(required = true)]
            files: Vec<String>,
            #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
            format: SweepFormat,
        },
    }

    #[derive(Clone, Copy, ValueEnum)]
    enum SweepFormat {
        Table,
        /// One row per configuration.
        Json,
        /// One line per run: a shard that `sweep-merge` combines exactly.
        Jsonl,
    }

    #[derive(Clone, Copy, ValueEnum)]
    enum Format {
        Json,
        Describe,
        Trace,
        /// The trace as JSON lines, one event each (`{at_ms, event, …, text}`,
        /// what a tour claim's `events` holds).
        Events,
    }

    fn load(file: &str) -> Result<String, String> {
        if file == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            Ok(s)
        } else {
            std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))
        }
    }

    /// Write to stdout; a closed pipe (`| head`) ends the output quietly
    /// instead of panicking.
    fn emit(text: &str) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("error: cannot write the output: {e}");
            }
        }
    }

    /// `value` as `serde_json::to_string_pretty` writes it, and a newline,
    /// written to stdout as it is made (no copy of a 20,000-partition
    /// cluster's 20 MB report in memory), with a closed pipe ending it
    /// quietly as in [`emit`].
    fn emit_pretty(value: &impl serde::Serialize) -> Result<(), serde_json::Error> {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, Pretty::default());
        let written = value.serialize(&mut ser).and_then(|()| {
            out.write_all(b"\n")
                .and_then(|()| out.flush())
                .map_err(serde_json::Error::io)
        });
        match written {
            Err(e) if e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => Ok(()),
            other => other,
        }
    }

    /// `serde_json::ser::PrettyFormatter` with its two-space indent, byte
    /// for byte, except that a new line and its indent are written as one
    /// piece rather than a piece per level (the report of a 20,000-partition
    /// cluster has about a million lines, most of them five levels deep).
    #[derive(Default)]
    struct Pretty {
        depth: usize,
        has_value: bool,
    }

    impl Pretty {
        /// A new line (after a comma unless `first`) indented to the depth.
        fn line<W: ?Sized + std::io::Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
            const SPACES: &[u8; 130] = b",\n                                                                                                                                ";
            let from = usize::from(first);
            let mut indent = 2 * self.depth;
            let now = indent.min(SPACES.len() - 2);
            w.write_all(&SPACES[from..2 + now])?;
            indent -= now;
            while indent > 0 {
                let n = indent.min(SPACES.len() - 2);
                w.write_all(&SPACES[2..2 + n])?;
                indent -= n;
            }
            Ok(())
        }

        fn open<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            start: &[u8],
        ) -> std::io::Result<()> {
            self.depth += 1;
            self.has_value = false;
            w.write_all(start)
        }

        fn close<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            end: &[u8],
        ) -> std::io::Result<()> {
            self.depth -= 1;
            if self.has_value {
                self.line(w, true)?;
            }
            w.write_all(end)
        }
    }

    impl serde_json::ser::Formatter for Pretty {
        fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.open(w, b"[")
        }

        fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.close(w, b"]")
        }

        fn begin_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            self.line(w, first)
        }

        fn end_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            _w: &mut W,
        ) -> std::io::Result<()> {
            self.has_value = true;
            Ok(())
        }

        fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.open(w, b"{")
        }

        fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.close(w, b"}")
        }

        fn begin_object_key<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            self.line(w, first)
        }

        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
        ) -> std::io::Result<()> {
            w.write_all(b": ")
        }

        fn end_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            _w: &mut W,
        ) -> std::io::Result<()> {
            self.has_value = true;
            Ok(())
        }
    }

    fn sweep(
        seeds: u64,
        first_seed: u64,
        set: &[String],
        format: SweepFormat,
        threads: Option<usize>,
    ) -> ExitCode {
        use failover_lab::sweep;
        let mut sets = Vec::new();
        for s in set {
            match s.split_once('=') {
                Some((k, v)) => sets.push((k.trim().to_string(), v.trim().to_string())),
                None => {
                    eprintln!("error: --set {s}: expected KEY=VALUE");
                    return ExitCode::from(2);
                }
            }
        }
        let configs = match sweep::matrix(&sets) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let threads =
            threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let started = std::time::Instant::now();
        let last = std::sync::atomic::AtomicUsize::new(0);
        let progress = |done: usize, total: usize| {
            let pct = done * 100 / total.max(1);
            if pct != last.swap(pct, std::sync::atomic::Ordering::Relaxed) || done == total {
                eprint!("\rsweep: {done}/{total} runs ({pct}%)");
                if done == total {
                    eprintln!(" in {:.1} s", started.elapsed().as_secs_f64());
                }
            }
        };
        match sweep::sweep_runs(&configs, first_seed, seeds, threads, &progress) {
            Ok(runs) => {
                if let SweepFormat::Jsonl = format {
                    emit(&sweep::shard_lines(&configs, &runs));
                } else {
                    print_summaries(&sweep::summarize(&configs, runs), format);
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }

    fn print_summaries(summaries: &[failover_lab::sweep::ConfigSummary], format: SweepFormat) {
        match format {
            SweepFormat::Table => emit(&failover_lab::sweep::table(summaries)),
            SweepFormat::Json | SweepFormat::Jsonl => {
                for s in summaries {
                    match serde_json::to_string(s) {
                        Ok(line) => emit(&format!("{line}\n")),
                        Err(e) => eprintln!("error: {e}"),
                    }
                }
            }
        }
    }

    fn sweep_merge(files: &[String], format: SweepFormat) -> ExitCode {
        let mut shards = Vec::new();
        for f in files {
            match load(f) {
                Ok(text) => shards.push((f.clone(), text)),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        match failover_lab::sweep::merge_shards(&shards) {
            Ok(summaries) => {
                print_summaries(&summaries, format);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        }
    }

    /// `failover-lab check FILE…`: each scenario loads and its tour's claims
    /// hold. Exit 2 if one does not load, 1 if a claim is false.
    fn check(files: &[String], verbose: bool) -> ExitCode {
        let (mut claims, mut false_claims, mut unbacked) = (0, 0, 0);
        for file in files {
            let text = match load(file) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let outcomes = Lab::from_json(&text).and_then(|lab| {
                let v: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| e.to_string())?;
                failover_lab::claims::evaluate(&v).map(|o| (lab, o))
            });
            let (lab, outcomes) = match outcomes {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("error: {file}: {e}");
                    return ExitCode::from(2);
                }
            };
            let bad = outcomes.iter().filter(|o| !o.holds()).count();
            // A tour that claims anything claims every sentence stating a fact.
            let unclaimed = if outcomes.is_empty() {
                Vec::new()
            } else {
                serde_json::from_str(&text)
                    .map(|v| failover_lab::claims::unclaimed(&v))
                    .unwrap_or_default()
            };
            unbacked += unclaimed.len();
            for (stop, sentence) in &unclaimed {
                eprintln!("error: {file}: {stop}: no claim backs {sentence:?}");
            }
            let tail = if outcomes.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} of {} claims true, {} fact sentences without a claim",
                    outcomes.iter().filter(|o| o.holds()).count(),
                    outcomes.len(),
                    unclaimed.len()
                )
            };
            let verdict = if bad + unclaimed.len() == 0 {
                "ok"
            } else {
                "FAILED"
            };
            emit(&format!(
                "{file}: {verdict} ({}){tail}\n",
                lab.scenario.name
            ));
            for o in &outcomes {
                if !o.holds() {
                    eprintln!(
                        "error: {file}: {} (at {} ms) is false: the text says {:?}, and `{}` is {}",
                        o.path, o.at_ms, o.claim.says, o.claim.check, o.value
                    );
                } else if verbose {
                    emit(&format!("{file}: {} ok: {}\n", o.path, o.claim.check));
                }
            }
            claims += outcomes.len();
            false_claims += bad;
        }
        if files.len() > 1 {
            emit(&format!(
                "{} files, {} of {claims} claims true, {unbacked} fact sentences without a claim\n",
                files.len(),
                claims - false_claims
            ));
        }
        if false_claims + unbacked > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }

    /// `import`: the files' text, one after another, into a scenario; a
    /// refusal names the file and its line.
    fn import(
        files: &[String],
        opts: &failover_lab::import::Options,
        output: Option<&str>,
    ) -> ExitCode {
        use failover_lab::import::{import, Limits};
        let mut text = String::new();
        // (file, first line of it in `text`)
        let mut starts: Vec<(&str, usize)> = Vec::new();
        for f in files {
            match load(f) {
                Ok(t) => {
                    starts.push((f, text.lines().count() + 1));
                    text.push_str(&t);
                    if !t.ends_with('\n') {
                        text.push('\n');
                    }
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        // "line N: …" of the whole text → "FILE, line M: …".
        let place = |e: String| -> String {
            let Some(n) = e
                .strip_prefix("line ")
                .and_then(|r| r.split_once(':'))
                .and_then(|(n, _)| n.parse::<usize>().ok())
            else {
                return e;
            };
            let (f, first) = starts
                .iter()
                .rev()
                .find(|(_, first)| *first <= n)
                .copied()
                .unwrap_or(("input", 1));
            let rest = e.split_once(':').map_or("", |(_, r)| r);
            format!("{f}, line {}:{rest}", n + 1 - first)
        };
        let started = std::time::Instant::now();
        let imported = match import(&text, opts, Limits::LAB) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("error: {}", place(e));
                return ExitCode::from(2);
            }
        };
        // The scenario must load as any other (it does by construction).
        if let Err(e) = failover_lab::scenario::parse(&imported.scenario) {
            eprintln!("error: the imported scenario does not load: {e}");
            return ExitCode::from(2);
        }
        for n in &imported.notes {
            eprintln!("import: {}", place(n.clone()));
        }
        eprintln!(
            "import: {} brokers, {} topics, {} partitions in {} ms",
            imported.brokers,
            imported.topics,
            imported.partitions,
            started.elapsed().as_millis()
        );
        match output {
            Some(path) => match std::fs::write(path, &imported.scenario) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {path}: {e}");
                    ExitCode::from(2)
                }
            },
            None => {
                emit(&imported.scenario);
                ExitCode::SUCCESS
            }
        }
    }

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        match cli.command {
            Command::Check { files, verbose } => check(&files, verbose),
            Command::Sweep {
                seeds,
                first_seed,
                set,
                format,
                threads,
            } => sweep(seeds, first_seed, &set, format, threads),
            Command::SweepMerge { files, format } => sweep_merge(&files, format),
            Command::Import {
                files,
                records_per_sec,
                acks,
                consumers,
                name,
                seed,
                until,
                output,
            } => {
                let opts = failover_lab::import::Options {
                    name,
                    seed,
                    records_per_sec,
                    acks,
                    consumers,
                    run_until_ms: until,
                };
                import(&files, &opts, output.as_deref())
            }
            Command::Run {
                file,
                sweep_seed,
                sweep_config,
                emit_scenario,
                format,
                seed,
                until,
                set,
            } => {
                let text = match (sweep_seed, file) {
                    (Some(s), _) => failover_lab::sweep::SweepConfig::parse_key(&sweep_config)
                        .map(|c| failover_lab::sweep::scenario(&c, s).to_string()),
                    (None, Some(f)) => load(&f),
                    (None, None) => Err("a scenario file or --sweep-seed is required".into()),
                };
                // --set: the same rules as the page's compare lanes.
                let mut applied = Default::default();
                let text = if set.is_empty() {
                    text
                } else {
                    text.and_then(|t| {
                        let pairs = failover_lab::settings::parse_pairs(&set)?;
                        let mut v: serde_json::Value = serde_json::from_str(&t)
                            .map_err(|e| format!("scenario is not valid JSON: {e}"))?;
                        applied = failover_lab::settings::apply(&mut v, &pairs)?;
                        Ok(v.to_string())
                    })
                };
                if emit_scenario {
                    return match text.and_then(|t| {
                        serde_json::from_str::<serde_json::Value>(&t).map_err(|e| e.to_string())
                    }) {
                        Ok(v) => {
                            emit(&format!(
                                "{}\n",
                                serde_json::to_string_pretty(&v).unwrap_or_default()
                            ));
                            ExitCode::SUCCESS
                        }
                        Err(e) => {
                            eprintln!("error: {e}");
                            ExitCode::from(2)
                        }
                    };
                }
                let mut scenario = match text.and_then(|t| failover_lab::scenario::parse(&t)) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(2);
                    }
                };
                if let Some(s) = seed {
                    scenario.spec.seed = s;
                }
                if let Some(u) = until {
                    scenario.run_until_ms = u;
                }
                let mut lab = Lab::new(scenario);
                lab.settings = applied;
                lab.run_to_end();
                match format {
                    Format::Json => {
                        let report = lab.report();
                        let written = emit_pretty(&report);
                        // Like the world below: the exit frees it anyway.
                        std::mem::forget(report);
                        if let Err(e) = written {
                            eprintln!("error: {e}");
                            return ExitCode::FAILURE;
                        }
                    }
                    Format::Describe => emit(&lab.describe()),
                    Format::Trace => {
                        let text: String = lab
                            .cluster
                            .trace
                            .events()
                            .map(|e| format!("{:>8} ms  {}\n", e.at_ms, e.text))
                            .collect();
                        emit(&text);
                    }
                    Format::Events => {
                        let mut text = String::new();
                        for e in lab.cluster.trace.events() {
                            match serde_json::to_string(e) {
                                Ok(line) => {
                                    text.push_str(&line);
                                    text.push('\n');
                                }
                                Err(e) => {
                                    eprintln!("error: {e}");
                                    return ExitCode::FAILURE;
                                }
                            }
                        }
                        emit(&text);
                    }
                }
                // The process ends here: handing a large world's millions of
                // heap blocks back one by one (a tenth of `run` on a
                // 20,000-partition cluster at 0 ms) is work the exit does anyway.
                std::mem::forget(lab);
                ExitCode::SUCCESS
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use serde_json::{json, Value};

        fn pretty(v: &Value) -> String {
            let mut out = Vec::new();
            let mut ser =
                serde_json::Serializer::with_formatter(&mut out, super::Pretty::default());
            serde::Serialize::serialize(v, &mut ser).unwrap();
            String::from_utf8(out).unwrap()
        }

        /// The report's bytes are a public contract (SCENARIO_FORMAT.md), and
        /// the identity check compares them across builds: the CLI's own
        /// writer must write what serde_json's pretty printer does, for empty
        /// and nested containers, escapes, and indents past the 128 spaces it
        /// writes in one piece.
        #[test]
        fn the_report_writer_writes_what_serde_jsons_pretty_printer_writes() {
            let mut deep = json!([1, {"k": []}]);
            for i in 0..70 {
                deep = if i % 2 == 0 {
                    json!({"a": deep, "b": {}})
                } else {
                    json!([deep, [], "x"])
                };
            }
            let cases = [
                json!(null),
                json!([]),
                json!({}),
                json!([[], {}, [[]], {"a": {}}]),
                json!({"topic": "bench", "partition": 0, "replicas": [1, 2, 3], "text": "a \"quoted\"\n\u{1}line", "f": 1.5, "neg": -3, "t": true}),
                deep,
            ];
            for v in &cases {
                let want = serde_json::to_string_pretty(v).unwrap();
                assert_eq!(pretty(v), want, "for {v}");
            }
        }
    }
}
