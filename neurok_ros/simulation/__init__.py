"""Simulation of an encoded mesh: its motion in metres, in one of two charts (docs/physics.md).

predict: predict_motion -> Prediction, which dispatches to articulated_chart (an object with joints:
rigid parts in joint coordinates) or latent_chart (everything else: the learned latent space,
learned_map, carried by a free body, free_body); settings: SimulationSettings from
config/simulation.yaml; action_binding, snapping: contacts on the mesh; drag_path: drag path files;
surrogate: the polynomial the latent chart's solver differentiates; dense_output: frames between
solver steps; output_decoding: full meshes at the output frames.
"""
