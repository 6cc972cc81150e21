"""Model shapes, the decoder's query cache, and forward-mode AD (jvp, jvp of jvp) through the decoder."""
import pytest
import torch

from neurok_ros.config_files import config_path, load_yaml
from neurok_ros.model import ModelConfig, NeuROKModel, parameter_count
from neurok_ros.model.attention import attend

# torch.func.jvp imports torch._decomp, which still calls the deprecated torch.jit.script
pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")]


TINY = load_yaml(config_path("model/tiny.yaml"))["model"]


def _model(**changes) -> NeuROKModel:
    torch.manual_seed(0)
    return NeuROKModel(ModelConfig.from_dict({**TINY, **changes}))


def _randomise_head(model: NeuROKModel) -> None:
    """The head starts at 'no deformation' (zero weights); give it weights so derivatives are non-zero."""
    with torch.no_grad():
        model.decoder.head[-1].weight.normal_(0.0, 0.3)


def test_shapes_and_unit_dual_quaternions():
    model = _model()
    cfg = model.config
    B, N, Q = 3, 50, 20
    points = torch.rand(B, N, 3) - 0.5
    deformation = torch.randn(B, N, 8)
    out = model(points, deformation, torch.rand(B, Q, 3) - 0.5)
    assert out["prediction"].shape == (B, Q, 8)
    for key in ("posterior_mean", "posterior_logvar", "prior_mean", "z"):
        assert out[key].shape == (B, cfg.num_tokens, cfg.token_dim)
    mu, shape_tokens = model.encode_prior(points)
    assert mu.shape == (B, cfg.num_tokens, cfg.token_dim) and shape_tokens.shape == (B, cfg.num_tokens, cfg.width)
    _randomise_head(model)
    z = torch.randn(B, cfg.latent_size)  # flat z is reshaped to K tokens
    prediction = model.decode(z, torch.rand(B, Q, 3) - 0.5, shape_tokens)
    real, dual = prediction[..., :4], prediction[..., 4:]
    torch.testing.assert_close(real.norm(dim=-1), torch.ones(B, Q))
    torch.testing.assert_close((real * dual).sum(-1), torch.zeros(B, Q), atol=1e-6, rtol=0)


def test_fresh_decoder_predicts_no_deformation():
    model = _model()
    prediction = model(torch.rand(2, 40, 3), torch.randn(2, 40, 8), torch.rand(2, 10, 3))["prediction"]
    identity = torch.zeros(8)
    identity[0] = 1
    torch.testing.assert_close(prediction, identity.expand_as(prediction))
    disp = _model(output="displacement")
    out = disp(torch.rand(2, 40, 3), torch.randn(2, 40, 3), torch.rand(2, 10, 3))["prediction"]
    assert out.shape == (2, 10, 3) and torch.count_nonzero(out) == 0


def test_query_cache_matches_direct_decoding_and_broadcasts():
    model = _model()
    _randomise_head(model)
    points = torch.rand(2, 40, 3) - 0.5
    mu, shape_tokens = model.encode_prior(points)
    query = torch.rand(25, 3) - 0.5
    direct = model.decode(mu, query.expand(2, 25, 3), shape_tokens)
    cache = model.prepare_queries(query)  # one query set shared by the batch
    torch.testing.assert_close(model.decode(mu, shape_context=shape_tokens, query_cache=cache), direct)
    with pytest.raises(ValueError, match="shape_tokens"):
        model.decode(mu, query[None])


def test_default_config_size():
    model = NeuROKModel(ModelConfig.from_dict(load_yaml(config_path("model/default.yaml"))["model"]))
    count = parameter_count(model)
    assert 1_000_000 <= count <= 1_500_000, count


def test_attention_is_softmax_weighted_average():
    q, k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(attend(q, k, v), expected)


def _decoder_function(model: NeuROKModel):
    model = model.double()
    points = torch.rand(1, 60, 3, dtype=torch.float64) - 0.5
    with torch.no_grad():
        mu, shape_tokens = model.encode_prior(points)
        cache = model.prepare_queries(points[0, :30])

    def positions(z):
        return model.decode_positions(z, cache, shape_tokens)

    return positions, mu


@pytest.mark.parametrize("output", ["dual_quaternion", "displacement"])
def test_forward_mode_ad_matches_finite_differences(output):
    model = _model(output=output)
    _randomise_head(model)
    f, z0 = _decoder_function(model)
    v = torch.randn_like(z0)
    h = 1e-4
    with torch.no_grad():
        value, tangent = torch.func.jvp(f, (z0,), (v,))
        torch.testing.assert_close(value, f(z0))
        central = (f(z0 + h * v) - f(z0 - h * v)) / (2 * h)
        assert tangent.abs().max() > 1e-3
        torch.testing.assert_close(tangent, central, rtol=1e-5, atol=1e-7)

        def directional(z):
            return torch.func.jvp(f, (z,), (v,))[1]

        _, second = torch.func.jvp(directional, (z0,), (v,))  # d2x/dz2 [v, v]
        h2 = 1e-3
        second_fd = (f(z0 + h2 * v) - 2 * f(z0) + f(z0 - h2 * v)) / h2 ** 2
        assert second.abs().max() > 1e-4
        torch.testing.assert_close(second, second_fd, rtol=1e-3, atol=1e-5)


def test_layer_norm_matches_torch_and_survives_nested_jvp():
    from neurok_ros.model.layer_norm import LayerNorm

    torch.manual_seed(1)
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    ours, reference = LayerNorm(16).double(), torch.nn.LayerNorm(16).double()
    with torch.no_grad():
        for p in (ours.weight, ours.bias):
            p.normal_()
        reference.load_state_dict(ours.state_dict())
        torch.testing.assert_close(ours(x), reference(x))
        v = torch.randn_like(x)
        _, second = torch.func.jvp(lambda z: torch.func.jvp(ours, (z,), (v,))[1], (x,), (v,))
        h = 1e-3
        fd = (ours(x + h * v) - 2 * ours(x) + ours(x - h * v)) / h ** 2
        torch.testing.assert_close(second, fd, rtol=1e-3, atol=1e-4)
