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
            /// Scenario JSON file ("-" for stdin).
            file: String,
            #[arg(long, value_enum, default_value_t = Format::Json)]
            format: Format,
            /// Override the scenario's seed.
            #[arg(long)]
            seed: Option<u64>,
            /// Override the scenario's run_until_ms.
            #[arg(long)]
            until: Option<u64>,
        },
        /// Check a scenario file without running it.
        Check { file: String },
    }

    #[derive(Clone, Copy, ValueEnum)]
    enum Format {
        Json,
        Describe,
        Trace,
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

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        match cli.command {
            Command::Check { file } => match load(&file).and_then(|t| Lab::from_json(&t)) {
                Ok(lab) => {
                    println!("{file}: ok ({})", lab.scenario.name);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            },
            Command::Run {
                file,
                format,
                seed,
                until,
            } => {
                let mut scenario = match load(&file).and_then(|t| failover_lab::scenario::parse(&t))
                {
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
                lab.run_to_end();
                match format {
                    Format::Json => match serde_json::to_string_pretty(&lab.report()) {
                        Ok(s) => println!("{s}"),
                        Err(e) => {
                            eprintln!("error: {e}");
                            return ExitCode::FAILURE;
                        }
                    },
                    Format::Describe => print!("{}", lab.describe()),
                    Format::Trace => {
                        for e in lab.cluster.trace.events() {
                            println!("{:>8} ms  {}", e.at_ms, e.text);
                        }
                    }
                }
                ExitCode::SUCCESS
            }
        }
    }
}
