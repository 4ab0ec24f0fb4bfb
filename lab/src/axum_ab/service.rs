//! What `axum-ab` knows of its service (`lab/services/axum-svc`): the page `/file` serves and
//! every route's exact answer, checked before each round's load.

use crate::framework::service_ab::Running;

/// The marker every `/file` response carries (the lab writes the page).
pub const PAGE_MARKER: &str = "<!-- weft-lab axum-ab page -->";

/// The page `/file` serves: 4 KiB of HTML with the marker wrk checks for.
pub fn page() -> Vec<u8> {
    let mut p = format!("<!doctype html>{PAGE_MARKER}<title>axum-ab</title><pre>\n");
    let mut i = 0u32;
    loop {
        let line = format!("line {i:05} of the page\n");
        if p.len() + line.len() + "</pre>\n".len() > 4096 {
            break;
        }
        p += &line;
        i += 1;
    }
    p += "</pre>\n";
    p.into_bytes()
}

/// FNV-1a over the 64 KiB pattern `/hash` covers: the lab's own computation of its answer.
fn expected_fnv() -> u64 {
    (0..65_536u32).fold(0xcbf2_9ce4_8422_2325u64, |h, i| {
        (h ^ u64::from((i.wrapping_mul(31) ^ (i >> 7)) as u8)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every route answers exactly what it must (before any load, every round).
pub fn check_routes(server: &Running, page: &[u8], with_legacy: bool) -> Result<(), String> {
    let json = |path: &str| server.get_json(path);
    let items: Vec<_> = (0..8)
        .map(|id| serde_json::json!({"id": id, "name": "widget", "tags": ["in-stock", if id % 2 == 0 { "even" } else { "odd" }]}))
        .collect();
    let want = [
        ("/json", serde_json::json!({"route": "json", "count": 8, "items": items})),
        ("/relay", serde_json::json!({"route": "relay", "price": 8434, "currency": "EUR"})),
        ("/hash", serde_json::json!({"route": "hash", "fnv": format!("{:016x}", expected_fnv())})),
    ];
    for (path, expected) in want {
        let got = json(path)?;
        if got != expected {
            return Err(format!("GET {path}: expected {expected}, got {got}"));
        }
    }
    let (status, body) = server.get("/file")?;
    if status != 200 || body.as_bytes() != page {
        return Err(format!("GET /file: status {status}, {} bytes, not the page", body.len()));
    }
    if with_legacy && json("/legacy")? != serde_json::json!({"route": "legacy"}) {
        return Err("GET /legacy: wrong answer".into());
    }
    Ok(())
}
