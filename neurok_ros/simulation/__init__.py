"""Simulation of a learned NeuROK instance: latent Lagrangian dynamics in metres (DESIGN §5).

learned_map: instance -> KinematicMap of a few surface points; settings: SimulationSettings from
config/simulation.yaml; snapping: contacts on the mesh; drag_path: drag path files; dense_output:
frames between solver steps; output_decoding: full meshes at the output frames; predict:
predict_motion -> Prediction.
"""
