# SPDX-License-Identifier: BSD-2-Clause
# crowdsec-lapi.sh - a private CrowdSec local API for the tests and the bench: source it, then
# lapi_config DIR PORT writes DIR/config.yaml (its database, credentials and simulation file in
# DIR; no central API, no log acquisition, no metrics) for `crowdsec -c DIR/config.yaml -no-cs`
# and `cscli -c DIR/config.yaml`.
lapi_config() {
	mkdir -p "$1/data"
	cat > "$1/config.yaml" <<Y
common: { daemonize: false, log_media: stdout, log_level: warning, working_dir: . }
config_paths:
  config_dir: $1/
  data_dir: $1/data/
  simulation_path: $1/simulation.yaml
  hub_dir: /var/lib/crowdsec/hub/
  index_path: /var/lib/crowdsec/hub/.index.json
  notification_dir: $1/notifications/
  plugin_dir: /usr/lib/crowdsec/plugins/
crowdsec_service: { acquisition_path: $1/acquis.yaml }
cscli: { output: human }
db_config: { log_level: warning, type: sqlite, use_wal: true, db_path: $1/data/crowdsec.db, flush: { max_items: 100000000 } }
api:
  client: { credentials_path: $1/local_api_credentials.yaml }
  server: { log_level: info, listen_uri: "127.0.0.1:$2", profiles_path: /etc/crowdsec/profiles.yaml, trusted_ips: [127.0.0.1] }
prometheus: { enabled: false }
Y
	printf 'simulation: false\n' > "$1/simulation.yaml"
}
