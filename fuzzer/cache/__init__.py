"""Cache pairs: a program compiled in two fresh processes that share the on-disk compile
caches, the second after one op's declaration changed; a trial kind of its own
(``fuzzer.cache.kind``), whose findings are ``stale-cache`` ones."""
