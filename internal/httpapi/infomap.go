package httpapi

// INFO fields and the names oliver006/redis_exporter gives them (without
// the "redis_" namespace), so that dashboards and alerts built for the
// exporter read Abacus unchanged. The tables hold the Redis fields the
// exporter maps, whether or not Abacus's INFO prints them today: a field
// INFO starts printing is exported without a change here. Fields of the
// exporter's other targets (Tile38, KeyDB, modules) are left out.

// infoGauges are exported as gauges.
var infoGauges = map[string]string{
	// Server
	"uptime_in_seconds": "uptime_in_seconds",
	"process_id":        "process_id",
	"io_threads_active": "io_threads_active",

	// Clients
	"connected_clients":               "connected_clients",
	"blocked_clients":                 "blocked_clients",
	"maxclients":                      "max_clients",
	"tracking_clients":                "tracking_clients",
	"clients_in_timeout_table":        "clients_in_timeout_table",
	"pubsub_clients":                  "pubsub_clients",
	"watching_clients":                "watching_clients",
	"total_watched_keys":              "total_watched_keys",
	"total_blocking_keys":             "total_blocking_keys",
	"total_blocking_keys_on_nokey":    "total_blocking_keys_on_nokey",
	"client_recent_max_output_buffer": "client_recent_max_output_buffer_bytes",
	"client_recent_max_input_buffer":  "client_recent_max_input_buffer_bytes",

	// Memory
	"allocator_active":              "allocator_active_bytes",
	"allocator_allocated":           "allocator_allocated_bytes",
	"allocator_resident":            "allocator_resident_bytes",
	"allocator_frag_ratio":          "allocator_frag_ratio",
	"allocator_frag_bytes":          "allocator_frag_bytes",
	"allocator_muzzy":               "allocator_muzzy_bytes",
	"allocator_rss_ratio":           "allocator_rss_ratio",
	"allocator_rss_bytes":           "allocator_rss_bytes",
	"used_memory":                   "memory_used_bytes",
	"used_memory_rss":               "memory_used_rss_bytes",
	"used_memory_peak":              "memory_used_peak_bytes",
	"used_memory_lua":               "memory_used_lua_bytes",
	"used_memory_vm_eval":           "memory_used_vm_eval_bytes",
	"used_memory_scripts_eval":      "memory_used_scripts_eval_bytes",
	"used_memory_overhead":          "memory_used_overhead_bytes",
	"used_memory_startup":           "memory_used_startup_bytes",
	"used_memory_dataset":           "memory_used_dataset_bytes",
	"number_of_cached_scripts":      "number_of_cached_scripts",
	"number_of_functions":           "number_of_functions",
	"number_of_libraries":           "number_of_libraries",
	"used_memory_vm_functions":      "memory_used_vm_functions_bytes",
	"used_memory_scripts":           "memory_used_scripts_bytes",
	"used_memory_functions":         "memory_used_functions_bytes",
	"used_memory_vm_total":          "memory_used_vm_total",
	"maxmemory":                     "memory_max_bytes",
	"mem_fragmentation_ratio":       "mem_fragmentation_ratio",
	"mem_fragmentation_bytes":       "mem_fragmentation_bytes",
	"mem_clients_slaves":            "mem_clients_slaves",
	"mem_clients_normal":            "mem_clients_normal",
	"mem_cluster_links":             "mem_cluster_links_bytes",
	"mem_aof_buffer":                "mem_aof_buffer_bytes",
	"mem_replication_backlog":       "mem_replication_backlog_bytes",
	"expired_stale_perc":            "expired_stale_percentage",
	"mem_not_counted_for_evict":     "mem_not_counted_for_eviction_bytes",
	"mem_total_replication_buffers": "mem_total_replication_buffers_bytes",
	"lazyfree_pending_objects":      "lazyfree_pending_objects",
	"lazyfreed_objects":             "lazyfreed_objects",
	"active_defrag_running":         "active_defrag_running",
	"migrate_cached_sockets":        "migrate_cached_sockets_total",
	"active_defrag_hits":            "defrag_hits",
	"active_defrag_misses":          "defrag_misses",
	"active_defrag_key_hits":        "defrag_key_hits",
	"active_defrag_key_misses":      "defrag_key_misses",

	// Persistence
	"loading":                      "loading_dump_file",
	"async_loading":                "async_loading",
	"rdb_changes_since_last_save":  "rdb_changes_since_last_save",
	"rdb_bgsave_in_progress":       "rdb_bgsave_in_progress",
	"rdb_last_save_time":           "rdb_last_save_timestamp_seconds",
	"rdb_last_bgsave_status":       "rdb_last_bgsave_status",
	"rdb_last_bgsave_time_sec":     "rdb_last_bgsave_duration_sec",
	"rdb_current_bgsave_time_sec":  "rdb_current_bgsave_duration_sec",
	"rdb_saves":                    "rdb_saves_total",
	"rdb_last_cow_size":            "rdb_last_cow_size_bytes",
	"rdb_last_load_keys_expired":   "rdb_last_load_expired_keys",
	"rdb_last_load_keys_loaded":    "rdb_last_load_loaded_keys",
	"aof_enabled":                  "aof_enabled",
	"aof_rewrite_in_progress":      "aof_rewrite_in_progress",
	"aof_rewrite_scheduled":        "aof_rewrite_scheduled",
	"aof_last_rewrite_time_sec":    "aof_last_rewrite_duration_sec",
	"aof_current_rewrite_time_sec": "aof_current_rewrite_duration_sec",
	"aof_last_cow_size":            "aof_last_cow_size_bytes",
	"aof_current_size":             "aof_current_size_bytes",
	"aof_base_size":                "aof_base_size_bytes",
	"aof_pending_rewrite":          "aof_pending_rewrite",
	"aof_buffer_length":            "aof_buffer_length",
	"aof_rewrite_buffer_length":    "aof_rewrite_buffer_length",
	"aof_pending_bio_fsync":        "aof_pending_bio_fsync",
	"aof_delayed_fsync":            "aof_delayed_fsync",
	"aof_last_bgrewrite_status":    "aof_last_bgrewrite_status",
	"aof_last_write_status":        "aof_last_write_status",
	"module_fork_in_progress":      "module_fork_in_progress",
	"module_fork_last_cow_size":    "module_fork_last_cow_size",

	// Stats
	"current_eviction_exceeded_time":         "current_eviction_exceeded_time_ms",
	"pubsub_channels":                        "pubsub_channels",
	"pubsub_patterns":                        "pubsub_patterns",
	"pubsubshard_channels":                   "pubsubshard_channels",
	"latest_fork_usec":                       "latest_fork_usec", // exported as latest_fork_seconds
	"tracking_total_keys":                    "tracking_total_keys",
	"tracking_total_items":                   "tracking_total_items",
	"tracking_total_prefixes":                "tracking_total_prefixes",
	"instantaneous_eventloop_cycles_per_sec": "instantaneous_eventloop_cycles_per_sec",
	"instantaneous_eventloop_duration_usec":  "instantaneous_eventloop_duration_usec",

	// Replication
	"connected_slaves":               "connected_slaves",
	"repl_backlog_size":              "replication_backlog_bytes",
	"repl_backlog_active":            "repl_backlog_is_active",
	"repl_backlog_first_byte_offset": "repl_backlog_first_byte_offset",
	"repl_backlog_histlen":           "repl_backlog_history_bytes",
	"master_repl_offset":             "master_repl_offset",
	"second_repl_offset":             "second_repl_offset",
	"slave_expires_tracked_keys":     "slave_expires_tracked_keys",
	"slave_priority":                 "slave_priority",
	"sync_full":                      "replica_resyncs_full",
	"sync_partial_ok":                "replica_partial_resync_accepted",
	"sync_partial_err":               "replica_partial_resync_denied",
}

// infoCounters are exported as counters.
var infoCounters = map[string]string{
	"total_connections_received":                "connections_received_total",
	"total_commands_processed":                  "commands_processed_total",
	"rejected_connections":                      "rejected_connections_total",
	"total_net_input_bytes":                     "net_input_bytes_total",
	"total_net_output_bytes":                    "net_output_bytes_total",
	"total_net_repl_input_bytes":                "net_repl_input_bytes_total",
	"total_net_repl_output_bytes":               "net_repl_output_bytes_total",
	"expired_subkeys":                           "expired_subkeys_total",
	"expired_keys":                              "expired_keys_total",
	"expired_time_cap_reached_count":            "expired_time_cap_reached_total",
	"expire_cycle_cpu_milliseconds":             "expire_cycle_cpu_time_ms_total",
	"evicted_keys":                              "evicted_keys_total",
	"evicted_clients":                           "evicted_clients_total",
	"evicted_scripts":                           "evicted_scripts_total",
	"total_eviction_exceeded_time":              "eviction_exceeded_time_ms_total",
	"keyspace_hits":                             "keyspace_hits_total",
	"keyspace_misses":                           "keyspace_misses_total",
	"eventloop_cycles":                          "eventloop_cycles_total",
	"eventloop_duration_sum":                    "eventloop_duration_sum_usec_total",
	"eventloop_duration_cmd_sum":                "eventloop_duration_cmd_sum_usec_total",
	"used_cpu_sys":                              "cpu_sys_seconds_total",
	"used_cpu_user":                             "cpu_user_seconds_total",
	"used_cpu_sys_children":                     "cpu_sys_children_seconds_total",
	"used_cpu_user_children":                    "cpu_user_children_seconds_total",
	"used_cpu_sys_main_thread":                  "cpu_sys_main_thread_seconds_total",
	"used_cpu_user_main_thread":                 "cpu_user_main_thread_seconds_total",
	"unexpected_error_replies":                  "unexpected_error_replies",
	"total_error_replies":                       "total_error_replies",
	"dump_payload_sanitizations":                "dump_payload_sanitizations",
	"total_reads_processed":                     "total_reads_processed",
	"total_writes_processed":                    "total_writes_processed",
	"io_threaded_reads_processed":               "io_threaded_reads_processed",
	"io_threaded_writes_processed":              "io_threaded_writes_processed",
	"client_query_buffer_limit_disconnections":  "client_query_buffer_limit_disconnections_total",
	"client_output_buffer_limit_disconnections": "client_output_buffer_limit_disconnections_total",
	"reply_buffer_shrinks":                      "reply_buffer_shrinks_total",
	"reply_buffer_expands":                      "reply_buffer_expands_total",
	"acl_access_denied_auth":                    "acl_access_denied_auth_total",
	"acl_access_denied_cmd":                     "acl_access_denied_cmd_total",
	"acl_access_denied_key":                     "acl_access_denied_key_total",
	"acl_access_denied_channel":                 "acl_access_denied_channel_total",
}

// abacusInfo are the INFO fields only Abacus prints, exported under the
// "abacus_" namespace (the exporter has no name for them).
var abacusInfo = map[string]struct {
	name    string
	counter bool
}{
	"go_heap_objects":  {"go_heap_objects", false},
	"go_memory_total":  {"go_memory_total_bytes", false},
	"go_gc_cycles":     {"go_gc_cycles_total", true},
	"go_memory_limit":  {"go_memory_limit_bytes", false},
	"panics_recovered": {"panics_recovered_total", true},

	"abacus_script_rollbacks": {"script_rollbacks_total", true},
}

// instanceInfoLabels are redis_instance_info's labels, each an INFO field.
var instanceInfoLabels = []string{"role", "redis_version", "redis_build_id", "redis_mode", "os",
	"maxmemory_policy", "tcp_port", "run_id", "process_id", "master_replid"}
