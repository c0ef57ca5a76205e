# deploy/kubernetes/python-app: app.py on top of the tenure wheel built from this repository.
#
#   docker build -f deploy/docker/python-app.Dockerfile -t tenure-python-app:0.1.0 .   (from the root)
#
# Not built by this repository's tests (no image registry reachable from the build machine); the
# same app.py runs in tests/deploy/test_kubernetes_e2e.py.

FROM rust:1.95-slim-trixie AS wheel
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /venv && /venv/bin/pip install --no-cache-dir maturin==1.16.0
WORKDIR /src
COPY . .
RUN cd python && /venv/bin/maturin build --release --locked --features kubernetes --out /wheels

FROM python:3.12-slim-trixie
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
COPY deploy/kubernetes/python-app/app.py /app/app.py
USER 65532:65532
EXPOSE 7946/udp 8080/tcp
ENTRYPOINT ["python", "/app/app.py"]
