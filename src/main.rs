//! The `lanes` binary: parse flags, run one subcommand, print `lanes: {err:#}` and exit 2 on error.

mod cli;

fn main() {
    let code = match cli::run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lanes: {err:#}");
            2
        }
    };
    std::process::exit(code);
}
