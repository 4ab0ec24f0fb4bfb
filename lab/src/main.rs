use weft_lab::adapter::RtConfig;
use weft_lab::runtimes::{sample_in_process, RuntimeId};
use weft_lab::workloads::SPECS;
fn main() {
    for rt in [RuntimeId::TokioMt, RuntimeId::TokioCt, RuntimeId::Smol] {
        for s in SPECS {
            let cfg = rt.default_config(2);
            let _ = sample_in_process(rt, &cfg, s.workload, s.smoke);
            let mut v = vec![];
            for &scale in s.quick { v.push(format!("{:?}", sample_in_process(rt, &cfg, s.workload, scale))); }
            println!("{} {} {:?}", rt.name(), s.name, v);
        }
    }
    let _ = RtConfig::new;
}
