/* The agents' names for an environment's saved state: thin wrappers over env.c's byte image of a tg_env. */
#include "env/env_internal.h"
#include "agents/rl_internal.h"

size_t tg_env_state_size(const tg_env *e) { return e ? tg_env_bytes(e) : 0; }

tg_status tg_env_save_state(const tg_env *e, void *buf, size_t size) { return tg_env_write_bytes(e, buf, size); }

tg_status tg_env_load_state(tg_env *e, const void *buf, size_t size) { return tg_env_read_bytes(e, buf, size); }
