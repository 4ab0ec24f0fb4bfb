//! The data both stores hold, and the answers it implies: the lab seeds PostgreSQL and Redis
//! from these formulas and computes every route's expected answer from the same formulas, so a
//! service that skipped a query or returned another row fails the pre-load check.

/// Users `1..=USERS` (route ids under load stay in range).
pub const USERS: i32 = 1000;

/// PostgreSQL's schema and rows: users with a balance and a visit counter, and `id % 9` orders
/// per user (order `k` of user `u` is `100 k + u` cents).
pub fn postgres_sql() -> String {
    format!(
        "CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL, email text NOT NULL, \
                             balance bigint NOT NULL, visits bigint NOT NULL DEFAULT 0);
         CREATE TABLE orders (id serial PRIMARY KEY, user_id int NOT NULL REFERENCES users (id), cents bigint NOT NULL);
         CREATE INDEX orders_user ON orders (user_id);
         INSERT INTO users (id, name, email, balance)
           SELECT i, 'user' || lpad(i::text, 4, '0'), 'user' || i || '@example.test', (i * 7919) % 100000
           FROM generate_series(1, {USERS}) i;
         INSERT INTO orders (user_id, cents)
           SELECT u, 100 * k + u FROM generate_series(1, {USERS}) u, generate_series(1, 8) k WHERE k <= u % 9;
         ANALYZE;"
    )
}

pub fn name(id: i32) -> String {
    format!("user{id:04}")
}

pub fn email(id: i32) -> String {
    format!("user{id}@example.test")
}

pub fn balance(id: i32) -> i64 {
    (i64::from(id) * 7919) % 100_000
}

/// Orders and their total cents.
pub fn orders(id: i32) -> (i64, i64) {
    let n = i64::from(id % 9);
    (n, 100 * n * (n + 1) / 2 + n * i64::from(id))
}

/// Redis's `session:ID` value.
pub fn token(id: i32) -> String {
    format!("tok-{:08x}", (id as u32).wrapping_mul(2_654_435_761))
}

/// `MSET session:1 tok… session:2 tok… …` as arguments.
pub fn redis_mset() -> Vec<String> {
    let mut args = vec!["MSET".to_string()];
    for id in 1..=USERS {
        args.push(format!("session:{id}"));
        args.push(token(id));
    }
    args
}

/// `DEL profile:1 … profile:USERS`: every round starts with a cold cache, so both builds see the
/// same mix of misses (PostgreSQL + `SET`) and hits.
pub fn redis_del_profiles() -> Vec<String> {
    std::iter::once("DEL".to_string()).chain((1..=USERS).map(|id| format!("profile:{id}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_totals_match_the_seed_formula() {
        for id in [1, 8, 9, 17, 1000] {
            let n = id % 9;
            let want: i64 = (1..=i64::from(n)).map(|k| 100 * k + i64::from(id)).sum();
            assert_eq!(orders(id), (i64::from(n), want), "user {id}");
        }
    }

    #[test]
    fn tokens_differ() {
        let t: std::collections::HashSet<String> = (1..=USERS).map(token).collect();
        assert_eq!(t.len(), USERS as usize);
    }
}
