//! weft's `WEFT_*` environment configuration: any set of values parses to a configuration or
//! an `InvalidInput` error that names the variable, the same way every time.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(lines) = std::str::from_utf8(data) else { return };
    let first = weft::runtime::__fuzz_parse_env_config(lines);
    let again = weft::runtime::__fuzz_parse_env_config(lines);
    match (&first, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), std::io::ErrorKind::InvalidInput);
            assert_eq!(a.to_string(), b.to_string());
            assert!(a.to_string().contains("WEFT_"), "the error names no variable: {a}");
        }
        _ => panic!("two parses of the same values disagree: {first:?} vs {again:?}"),
    }
});
