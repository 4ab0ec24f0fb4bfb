//! `weft-lab`: see the library's docs (`lab/src/lib.rs`) and `weft-lab --help`.

fn main() -> std::process::ExitCode {
    weft_lab::cli::main()
}
