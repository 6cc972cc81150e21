"""`neurok bench`: run the benchmarks and write docs/benchmarks.md."""
from __future__ import annotations

GROUPS = ("geometry", "ros", "data", "dynamics", "simulate", "ik", "articulate", "node")


def register(subparsers) -> None:
    parser = subparsers.add_parser("bench", help="run benchmarks, write a Markdown report")
    parser.add_argument("--out", default="docs/benchmarks.md", help="report path")
    parser.add_argument("--only", nargs="+", choices=GROUPS, help="run only these groups")
    parser.set_defaults(func=run)


def run(args) -> int:
    from tqdm import tqdm

    from neurok_ros.benchmarks.report import write_report
    from neurok_ros.benchmarks.timing import CpuShare

    def geometry():
        from neurok_ros.benchmarks.geometry_benchmarks import benchmark_geometry
        return benchmark_geometry()

    def ros():
        from neurok_ros.benchmarks.conversion_benchmarks import benchmark_ros_conversions
        return benchmark_ros_conversions()

    def data():
        from neurok_ros.benchmarks.data_benchmarks import benchmark_data_generation
        return benchmark_data_generation(), ("Each run generates a new instance (a new seed), with no warm-up; "
                                             "one process, so one core.")

    def dynamics():
        from neurok_ros.benchmarks.dynamics_benchmarks import benchmark_dynamics
        return benchmark_dynamics()

    def simulate():
        from neurok_ros.benchmarks.simulation_benchmarks import benchmark_simulation
        return benchmark_simulation()

    def ik():
        from neurok_ros.benchmarks.inverse_kinematics_benchmarks import benchmark_inverse_kinematics
        return benchmark_inverse_kinematics()

    def articulate():
        from neurok_ros.benchmarks.articulation_benchmarks import benchmark_articulation
        return benchmark_articulation()

    def node():
        from neurok_ros.benchmarks.node_benchmarks import benchmark_node
        return benchmark_node()

    runners = {"geometry": ("Geometry core", geometry), "ros": ("ROS message conversions", ros),
               "data": ("Dataset generation (one core per instance)", data),
               "dynamics": ("Latent dynamics: curvature term, forward AD vs Christoffel symbols", dynamics),
               "simulate": ("neurok simulate: 10k-vertex mesh, 2 s at 30 fps", simulate),
               "ik": ("neurok ik: 10k-vertex mesh", ik),
               "articulate": ("neurok articulate: 10k-vertex mesh", articulate),
               "node": ("neurok_node: start, first mesh, action-to-trajectory latency", node)}
    groups, notes = {}, {}
    with CpuShare() as share:
        for key in tqdm(args.only or GROUPS, desc="benchmarks", unit="group"):
            title, runner = runners[key]
            result = runner()
            if isinstance(result, tuple):  # (rows, note)
                result, notes[title] = result
            groups[title] = result
    command = "make bench" if not args.only else f"neurok bench --only {' '.join(args.only)}"
    path = write_report(args.out, groups, command, notes, share.sentence())
    for title, rows in groups.items():
        print(f"{title}:")
        for row in rows:
            print(f"  {row.name}: {row.median_ms:.1f} ms (median of {row.repeats})")
        if title in notes:
            print("  " + notes[title].replace("\n\n", "\n  ").replace("**", ""))
    print(share.sentence())
    print(f"wrote {path}")
    return 0
