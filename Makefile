# neurok_ros: `make demo` and `make test` do everything on a fresh machine.
VENV    ?= .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
IFSTAMP := $(VENV)/.neurok_interfaces.stamp
SYSPY   ?= python3

.PHONY: setup lint test test-fast demo bench train clean

setup: $(STAMP) $(IFSTAMP)

$(STAMP): requirements.txt requirements-nodeps.txt setup.py setup.cfg
	@if [ "$$(id -u)" = "0" ] && ! ldconfig -p | grep -q libusb-1.0.so.0; then \
		echo "installing libusb-1.0-0 (needed by open3d)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libusb-1.0-0 >/dev/null; \
	fi
	@test -x $(PYTHON) || $(SYSPY) -m venv $(VENV)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -r requirements.txt
	$(PYTHON) -m pip install -q --no-deps -r requirements-nodeps.txt
	$(PYTHON) -m pip install -q --no-deps --no-build-isolation -e .
	@touch $(STAMP)

# The ROS 2 interfaces (neurok_interfaces/, and third_party_interfaces/tf2_msgs/ unless the venv has
# tf2_msgs): build wheels, then cmake + make into the venv (~2 min once).
$(IFSTAMP): $(STAMP) requirements-interfaces.txt scripts/build_interfaces.py \
		$(wildcard neurok_interfaces/*.txt neurok_interfaces/*.xml neurok_interfaces/msg/* neurok_interfaces/action/*) \
		$(wildcard third_party_interfaces/tf2_msgs/*.txt third_party_interfaces/tf2_msgs/*.xml \
		third_party_interfaces/tf2_msgs/msg/*)
	$(PYTHON) scripts/build_interfaces.py --venv $(VENV)

lint: setup
	$(VENV)/bin/ruff check .

# Everything (lint, then every test tier: unit, ros, model, slow; pytest.ini names them).
test: setup lint
	$(PYTHON) -m pytest -q test

# The fast unit tier only (no rclpy nodes, no shipped model, no training, nothing slow).
test-fast: setup
	$(PYTHON) -m pytest -q -m "unit and not slow" test

demo: setup
	$(VENV)/bin/neurok demo --out out/demo

bench: setup
	$(VENV)/bin/neurok bench --out docs/benchmarks.md

# Long job, not part of the tests: the shipped model and the evaluation's models (docs/model.md).
TRAIN_OUT ?= out/train
MINUTES   ?= 60
train: setup
	PYTHON=$(PYTHON) scripts/train_release.sh $(TRAIN_OUT) $(MINUTES)

clean:
	rm -rf $(VENV) out build install log *.egg-info
